import { type EvidenceRecord, judge, latestRecord } from "./gate.ts";
import { RETRY_TASKS_HINT } from "./landing.ts";
import type { VerificationPlan } from "./plan.ts";
import { planPolicyMismatch } from "./promotion.ts";

/**
 * Rerunning one check of a Candidate (docs/landing.md, "Rerun a check"). A check whose latest
 * Evidence ended in error or fail may be run again on the same composed tree while the Candidate is
 * rejected on the current canonical generation, at most `limit` times per check. The rerun's
 * Evidence sits beside the earlier records and the gate reads the latest one. This one rule decides
 * both what the UI offers and what the API accepts.
 */
export interface RerunInput {
  candidateStatus: string;
  changeStatus: string;
  /** The Candidate's base is no longer the canonical generation (it will be recomposed instead). */
  stale: boolean;
  approvalDecision: string | null;
  plan: VerificationPlan | null;
  evidence: readonly EvidenceRecord[];
  /** Reruns already made, by check ID. */
  rerunsUsed: Readonly<Record<string, number>>;
  /** The project's policy's rerun budget. */
  limit: number;
  /** The project's active policy: a plan made under another version cannot be promoted, rerun or not. */
  activePolicy?: { id: string; version: number };
}

export interface CheckRerunOption {
  checkId: string;
  used: number;
  limit: number;
  /** Null when the check may be rerun now; otherwise why not, in one sentence. */
  refusal: string | null;
}

const RERUNNABLE_STATUSES = new Set(["error", "fail"]);

/** Why the Candidate as a whole cannot have any check rerun, or null. */
function candidateRefusal(i: RerunInput): string | null {
  if (i.changeStatus === "promoted" || i.changeStatus === "cancelled")
    return `the change is ${i.changeStatus}: nothing of it runs again`;
  if (i.candidateStatus === "created" || i.candidateStatus === "verifying")
    return "the Candidate's verification is still running; wait for it to finish";
  if (i.candidateStatus !== "rejected")
    return `the Candidate is ${i.candidateStatus}; only a rejected Candidate's checks can be rerun`;
  if (i.stale)
    return `the Candidate's base is no longer the canonical generation, so a rerun would check a tree that cannot land; ${RETRY_TASKS_HINT}`;
  if (i.approvalDecision === "rejected") return "an approver rejected the Candidate; a rerun cannot undo that";
  if (!i.plan) return "the Candidate was rejected before it had a Verification Plan (its composition failed)";
  const mismatch = i.activePolicy ? planPolicyMismatch(i.plan, i.activePolicy) : null;
  if (mismatch) return `${mismatch}: promotion would refuse it whatever a rerun shows`;
  return null;
}

export function checkRerunOptions(i: RerunInput): CheckRerunOption[] {
  const whole = candidateRefusal(i);
  return (i.plan?.checks ?? []).map((check) => {
    const used = i.rerunsUsed[check.id] ?? 0;
    const option = (refusal: string | null): CheckRerunOption => ({ checkId: check.id, used, limit: i.limit, refusal });
    if (whole) return option(whole);
    const latest = latestRecord(check, i.evidence);
    if (!latest) return option(`check ${check.id} has no Evidence yet`);
    if (!RERUNNABLE_STATUSES.has(latest.status)) {
      const verdict = judge(check, latest);
      return option(
        `check ${check.id} ended ${latest.status}${verdict.gap ? ` (${verdict.gap})` : ""}; only a check that ended in error or fail can be rerun`,
      );
    }
    if (used >= i.limit)
      return option(
        `check ${check.id} has been rerun ${used} of ${i.limit} times on this Candidate; no reruns are left`,
      );
    return option(null);
  });
}

/** Why `checkId` cannot be rerun now, or null when it can. */
export function checkRerunRefusal(i: RerunInput, checkId: string): string | null {
  const whole = candidateRefusal(i);
  if (whole) return whole;
  const option = checkRerunOptions(i).find((o) => o.checkId === checkId);
  if (!option) {
    const known = (i.plan?.checks ?? []).map((c) => c.id).join(", ");
    return `the Candidate's plan has no check ${checkId}; its checks are ${known}`;
  }
  return option.refusal;
}

/** The stable ID of the n-th rerun of a check (also the ID of its workflow instance). */
export const checkRerunId = (candidateId: string, checkId: string, n: number) =>
  `rerun_${candidateId.replace(/^cand_/, "")}_${checkId}_${n}`;
