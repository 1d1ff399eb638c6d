import type { PlannedCheck, VerificationPlan } from "./plan.ts";

/**
 * Evidence and the gate (docs/protocol.md, Verification and Evidence; The gate and its gaps). The gate reads the latest record of
 * each required check; anything short of a supported pass within its timeout, with its metric
 * met, is a gap, and a Candidate with any gap is not promotable.
 */
export const EVIDENCE_STATUSES = ["pass", "fail", "error", "skipped"] as const;
export const COVERAGES = ["not_checked", "checked_no_signal", "checked_supported"] as const;
export type EvidenceStatus = (typeof EVIDENCE_STATUSES)[number];
export type Coverage = (typeof COVERAGES)[number];

export interface EvidenceRecord {
  id: string;
  checkId: string;
  status: EvidenceStatus;
  coverage: Coverage;
  durationMs: number;
  timeoutSeconds: number;
  completedAt: Date;
  metrics: Record<string, number>;
  outputKey: string | null;
  /** How the check ended in its reader's words ("exited with 1; 3 passed, 0 skipped, 1 failed"). */
  detail: string;
  /** The failure's first lines (failure-excerpt.ts) when the command did not pass; null otherwise. */
  excerpt: string[] | null;
  /** The Evidence this record reuses (docs/checks-file.md, Reused Evidence); the check did not run for it. */
  reusedFrom?: string | null;
}

export const GAP_KINDS = [
  "missing",
  "timed_out",
  "skipped",
  "error",
  "failed",
  "not_checked",
  "no_signal",
  "expectation_not_met",
  /** A conflict review's supported blocking finding (context/conflict-review.ts), not a check's record. */
  "blocking_finding",
  /** A command or program Agent's edits outside its Task's declared paths (declared-paths.ts). */
  "outside_paths",
] as const;
export type GapKind = (typeof GAP_KINDS)[number];

export interface CheckVerdict {
  checkId: string;
  satisfied: boolean;
  gap: GapKind | null;
  evidenceId: string | null;
  detail: string;
  /** A failed, erroring or timed-out check's first failure lines (the compiler error, the failing test); else empty. */
  excerpt: string[];
}

export interface GateResult {
  promotable: boolean;
  verdicts: CheckVerdict[];
  gaps: CheckVerdict[];
}

/** The flowchart for one record. */
export function judge(check: PlannedCheck, e: EvidenceRecord | undefined): CheckVerdict {
  const v = (gap: GapKind | null, detail: string, excerpt: string[] = []): CheckVerdict => ({
    checkId: check.id,
    satisfied: gap === null,
    gap,
    evidenceId: e?.id ?? null,
    detail,
    excerpt,
  });
  if (!e) return v("missing", "no Evidence recorded");
  // A check that did not pass says how it ended and what it printed first, not only that it failed.
  // (A detail that already says it, as the worker's "the check could not run: …", is not said twice.)
  const ended = (what: string) => (!e.detail ? what : e.detail.startsWith(what) ? e.detail : `${what}: ${e.detail}`);
  const excerpt = e.excerpt ?? [];
  if (e.durationMs > check.timeoutSeconds * 1000)
    return v("timed_out", `took ${e.durationMs} ms, limit ${check.timeoutSeconds} s`, excerpt);
  if (e.status === "skipped") return v("skipped", "the check was skipped");
  if (e.status === "error") return v("error", ended("the check could not run"), excerpt);
  if (e.status === "fail") return v("failed", ended("the check failed"), excerpt);
  if (e.coverage === "not_checked") return v("not_checked", "passed without checking anything");
  if (e.coverage === "checked_no_signal") return v("no_signal", "ran but gave no signal");
  if (check.metric) {
    const value = e.metrics[check.metric.name];
    if (value === undefined || !Number.isFinite(value) || value >= check.metric.below) {
      return v(
        "expectation_not_met",
        `${check.metric.name} ${value ?? "missing"}, must be below ${check.metric.below}`,
      );
    }
  }
  return v(null, "satisfied");
}

/** The latest record of a check; on a tie in completion time a non-passing record wins. */
export function latestRecord(check: PlannedCheck, records: readonly EvidenceRecord[]): EvidenceRecord | undefined {
  let best: EvidenceRecord | undefined;
  for (const r of records) {
    if (r.checkId !== check.id) continue;
    if (!best || r.completedAt.getTime() > best.completedAt.getTime()) best = r;
    else if (
      r.completedAt.getTime() === best.completedAt.getTime() &&
      judge(check, best).satisfied &&
      !judge(check, r).satisfied
    )
      best = r;
  }
  return best;
}

export function gateRequiredChecks(plan: VerificationPlan, evidence: readonly EvidenceRecord[]): GateResult {
  const verdicts = plan.checks.map((c) => judge(c, latestRecord(c, evidence)));
  const gaps = verdicts.filter((v) => !v.satisfied);
  return { promotable: plan.checks.length > 0 && gaps.length === 0, verdicts, gaps };
}
