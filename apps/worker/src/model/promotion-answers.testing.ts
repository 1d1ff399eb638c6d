import type { CreateCandidateResult, PromoteResult } from "@rhumbatron/db";
import { candidateIndex, type RunState } from "./promotion-invariants.testing.ts";
import type { Answer, Block } from "./promotion-model.testing.ts";
import type { Composed, Refusal, Seen } from "./promotion-steps.testing.ts";

/**
 * Test support only: the real system's answers in the model's words (promotion-model.testing.ts,
 * Answer), so the promotion model's commands can compare the two.
 */
/** A refused request: its error code, and its reason when it names one. */
export const refusal = (x: Refusal): Answer => ({
  kind: "refused",
  code: x.refused,
  ...(x.reason ? { reason: x.reason } : {}),
});

/** candidate.create's answer, and what the composition then made of the Candidate. */
export function composeAnswer(r: RunState, seen: Seen<CreateCandidateResult> & { after?: Composed }): Answer {
  const c = seen.first;
  if (c?.candidateId) {
    return {
      kind: "candidate",
      candidate: candidateIndex(r, c.candidateId),
      created: c.created,
      after: seen.after ?? "as is",
    };
  }
  if (c?.held) return { kind: "skipped", why: "held" };
  if (c?.skipped?.startsWith("the change is")) return { kind: "skipped", why: "moved on" };
  if (c?.skipped?.startsWith("a newer Candidate")) return { kind: "skipped", why: "replaced" };
  return { kind: "refused", code: "UNEXPECTED", reason: JSON.stringify(c) };
}

/** A promotion's blocks by kind; a block the model has no kind for stays as it is written, and fails the comparison. */
function blockKind(text: string): Block {
  if (/^the Candidate is \w+, not verified$/.test(text)) return "status";
  if (text === "no Verification Plan") return "plan";
  if (text.startsWith("gap ")) return "gap";
  if (text === "approval is pending" || text.startsWith("approval was rejected")) return "approval";
  if (text === "the composed commit is not in the Candidate fork") return "fork";
  return text as Block;
}

export function promoteAnswer(p: PromoteResult | undefined): Answer | undefined {
  if (!p) return undefined;
  if (p.outcome === "promoted") return { kind: "promoted", generation: p.generation };
  if (p.outcome === "alreadyPromoted") return { kind: "alreadyPromoted", generation: p.generation };
  if (p.outcome === "stale") return { kind: "stale", canonicalGeneration: p.canonicalGeneration };
  return { kind: "blocked", blocks: [...new Set(p.blocks.map(blockKind))].sort() };
}

/** An answer in a few words (`promoted`, `blocked status+gap`, `refused CONFLICT tree_mismatch`). */
export function outcomeOf(a: unknown): string {
  if (Array.isArray(a)) return a.map(outcomeOf).join(" & ");
  const x = a as Answer | undefined;
  if (!x) return "none";
  if (x.kind === "candidate") return `${x.created ? "new" : "same"} Candidate, ${x.after}`;
  if (x.kind === "skipped") return `skipped, ${x.why}`;
  if (x.kind === "verdict") return x.status;
  if (x.kind === "decided") return `${x.decision}${x.already ? " again" : ""}`;
  if (x.kind === "refused") return `refused ${x.code}${x.reason ? ` ${x.reason}` : ""}`;
  if (x.kind === "blocked") return `blocked ${x.blocks.join("+")}`;
  return x.kind;
}
