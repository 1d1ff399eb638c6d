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
  /** The tests of its report that failed on some attempt (docs/flaky-tests.md); null: no report. */
  failingTests?: FailingTest[] | null;
}

/** A test that failed on at least one attempt of its check on the Candidate's tree. */
export interface FailingTest {
  id: string;
  /** Suite path and name, as a reader reads it ("parser > reads numbers"). */
  name: string;
  attempts: number;
  failedAttempts: number;
  /** The project had never run it before this Candidate: the Change adds it. */
  isNew?: boolean;
}

/** The key of a test in its project's quarantine: the check and the test's ID. */
export const testKey = (checkId: string, testId: string) => `${checkId}\u0000${testId}`;

/** A quarantined test that failed and was let through, as the gate names it. */
export interface QuarantinedFailure {
  checkId: string;
  testId: string;
  name: string;
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
  /** The check failed only on tests that also passed on the same tree (docs/flaky-tests.md). */
  "flaky",
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
  /** Quarantined tests whose failure this verdict let through (docs/flaky-tests.md). */
  quarantined?: QuarantinedFailure[];
}

export interface GateResult {
  promotable: boolean;
  verdicts: CheckVerdict[];
  gaps: CheckVerdict[];
  /** Every quarantined test that failed and did not block, by name. */
  quarantined?: QuarantinedFailure[];
}

/**
 * The flowchart for one record. `quarantined` holds the keys (testKey) of the project's tests in
 * quarantine: a failed check whose failing tests are all quarantined is satisfied, and says which.
 */
export function judge(
  check: PlannedCheck,
  e: EvidenceRecord | undefined,
  quarantined: ReadonlySet<string> = NO_TESTS,
): CheckVerdict {
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
  if (e.status === "fail")
    return failedTests(check, e, quarantined, v) ?? v("failed", ended("the check failed"), excerpt);
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

const NO_TESTS: ReadonlySet<string> = new Set();

/** "parser > reads numbers (failed 1 of 3 attempts)" */
const attemptsText = (t: FailingTest) => `${t.name} (failed ${t.failedAttempts} of ${t.attempts} attempts)`;

/**
 * A failed check read by its tests, when its report lists every failing one: all quarantined, it
 * is satisfied and names them; the rest all flaky (each also passed on this tree), a `flaky` gap
 * that names them (a new test's flakiness said so). Otherwise null: the check failed.
 */
function failedTests(
  check: PlannedCheck,
  e: EvidenceRecord,
  quarantined: ReadonlySet<string>,
  v: (gap: GapKind | null, detail: string, excerpt?: string[]) => CheckVerdict,
): CheckVerdict | null {
  const failing = e.failingTests ?? [];
  if (failing.length === 0 || e.metrics.failed !== failing.length) return null;
  const waived = failing.filter((t) => quarantined.has(testKey(check.id, t.id)));
  const rest = failing.filter((t) => !quarantined.has(testKey(check.id, t.id)));
  const named = waived.map((t) => ({ checkId: check.id, testId: t.id, name: t.name }));
  const letThrough = waived.length ? `; quarantined, not blocking: ${waived.map(attemptsText).join("; ")}` : "";
  if (rest.length === 0) return { ...v(null, `satisfied${letThrough}`), quarantined: named };
  if (!rest.every((t) => t.failedAttempts < t.attempts)) return null;
  const fresh = rest.filter((t) => t.isNew);
  const old = rest.filter((t) => !t.isNew);
  const detail = [
    old.length ? `flaky: ${old.map(attemptsText).join("; ")}` : "",
    fresh.length ? `flaky new test${fresh.length === 1 ? "" : "s"}: ${fresh.map(attemptsText).join("; ")}` : "",
  ]
    .filter(Boolean)
    .join("; ");
  return { ...v("flaky", `${detail}${letThrough}`, e.excerpt ?? []), quarantined: named };
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

export function gateRequiredChecks(
  plan: VerificationPlan,
  evidence: readonly EvidenceRecord[],
  quarantined: ReadonlySet<string> = NO_TESTS,
): GateResult {
  const verdicts = plan.checks.map((c) => judge(c, latestRecord(c, evidence), quarantined));
  const gaps = verdicts.filter((v) => !v.satisfied);
  const passed = verdicts.flatMap((v) => v.quarantined ?? []);
  return {
    promotable: plan.checks.length > 0 && gaps.length === 0,
    verdicts,
    gaps,
    ...(passed.length ? { quarantined: passed } : {}),
  };
}
