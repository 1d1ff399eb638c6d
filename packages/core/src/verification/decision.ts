import { excerptHead } from "./failure-excerpt.ts";
import { RETRY_TASKS_HINT } from "./landing.ts";

/**
 * What a person deciding about a Candidate needs first (pure): can it be approved, what is it
 * waiting for, what blocks it, or where did it end. The Candidate page's header and the first
 * lines of `rhumbatron candidate show` both read this, and only the actions it lists are offered.
 */
export type DecisionState =
  | "verifying"
  | "ready_to_approve"
  | "ready_to_promote"
  | "blocked"
  | "rejected"
  | "promoted"
  | "stale"
  | "cancelled";

/** `retry_tasks`: new attempts of the Change's Tasks, for a new Candidate on the current generation. */
export type DecisionAction = "approve" | "reject" | "promote" | "rerun" | "retry_tasks";

export interface DecisionFacts {
  status: string;
  /** `reasons`: the rules that ask a person to approve (the plan's), named in the decision. */
  approval: { required: boolean; state: string; byName: string | null; reasons?: string[] };
  /** The checks of the plan and whether the gate found their Evidence (null: not judged yet). */
  checks: { checkId: string; recorded: boolean }[];
  /** `excerpt`: a failed check's first failure lines (the gate's); the first is named in the reason. */
  gaps: { checkId: string; gap: string | null; detail: string; excerpt?: readonly string[] }[];
  rejectionReason: string | null;
  /** What promotion would refuse now (the rules promotion applies, read afresh each time). */
  promotionBlocks: string[];
  promotion: { generation: number; at: Date; byName: string } | null;
  replacedBy: string | null;
  /** Checks that may be rerun now (a rejected Candidate). */
  rerunnable: string[];
  /** Its Change has "land when ready" on: the landing queue promotes it, nobody needs to click. */
  landsByQueue?: boolean;
}

export interface CandidateDecision {
  state: DecisionState;
  headline: string;
  /** Each reason on its own line: a gap with its rule, a block, what it waits for. */
  reasons: string[];
  actions: DecisionAction[];
}

export function candidateDecision(f: DecisionFacts): CandidateDecision {
  const gapLines = f.gaps.map((g) => {
    const first = excerptHead(g.excerpt ?? []);
    return `${g.checkId}: ${g.gap ?? "gap"}: ${g.detail}${first ? ` — ${first}` : ""}`;
  });
  switch (f.status) {
    case "created":
    case "verifying": {
      const waiting = f.checks.filter((c) => !c.recorded).map((c) => c.checkId);
      return {
        state: "verifying",
        headline: waiting.length ? `Waiting for checks: ${waiting.join(", ")}` : "Waiting for its checks",
        reasons: f.status === "created" ? ["being composed"] : [],
        actions: [],
      };
    }
    case "verified":
      return verifiedDecision(f);
    case "rejected":
      return {
        state: "rejected",
        headline: `Rejected: ${f.rejectionReason ?? "the gate found gaps"}`,
        reasons: [...gapLines, `to go on: ${RETRY_TASKS_HINT}`],
        actions: f.rerunnable.length ? ["rerun", "retry_tasks"] : ["retry_tasks"],
      };
    case "promoted":
      return {
        state: "promoted",
        headline: f.promotion
          ? // The time is beside it on every surface (the page in the reader's time, the CLI in UTC).
            `Promoted as generation ${f.promotion.generation} by ${f.promotion.byName}`
          : "Promoted",
        reasons: [],
        actions: [],
      };
    case "stale":
      return {
        state: "stale",
        headline: f.replacedBy
          ? `Stale: main moved on; recomposed as ${f.replacedBy}`
          : "Stale: main moved on; a recomposition follows when the Change is still open",
        reasons: [],
        actions: [],
      };
    default:
      return { state: "cancelled", headline: "Cancelled with its Change", reasons: [], actions: [] };
  }
}

/** A verified Candidate: blocked by promotion's rules, waiting for approval, or ready to promote. */
function verifiedDecision(f: DecisionFacts): CandidateDecision {
  if (f.promotionBlocks.length > 0) {
    return {
      state: "blocked",
      headline: "Blocked: promotion would be refused now",
      reasons: f.promotionBlocks,
      actions: [],
    };
  }
  if (f.approval.required && f.approval.state === "pending") {
    return {
      state: "ready_to_approve",
      headline: "Ready to approve: every required check passed",
      reasons: [
        ...(f.approval.reasons?.length
          ? f.approval.reasons.map((r) => `a person approves this exact tree: ${r}`)
          : ["the policy asks a person to approve this exact tree"]),
        ...(f.landsByQueue ? ["once approved, the landing queue promotes it (its Change lands when ready)"] : []),
      ],
      actions: ["approve", "reject"],
    };
  }
  if (f.landsByQueue) {
    return {
      state: "ready_to_promote",
      headline: f.approval.required
        ? `Approved${f.approval.byName ? ` by ${f.approval.byName}` : ""}: the landing queue promotes it`
        : "Verified: the landing queue promotes it; no approval needed",
      reasons: ["its Change lands when ready, so the landing queue promotes it in its turn"],
      actions: [],
    };
  }
  return {
    state: "ready_to_promote",
    headline: f.approval.required
      ? `Ready to promote: approved${f.approval.byName ? ` by ${f.approval.byName}` : ""}`
      : "Ready to promote: every required check passed; no approval needed",
    reasons: [],
    actions: ["promote"],
  };
}
