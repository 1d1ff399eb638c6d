import type { CommandResult, RhumbatronConfig } from "@rhumbatron/core";
import type { ReportReading } from "./checks.ts";
import type { TestOutcome, TestReport } from "./reports.ts";

/**
 * A check with a test report may run more than once on one tree (docs/flaky-tests.md): again while
 * one of its tests failed and has not passed yet (up to tests.failingAttempts runs), and, when the
 * Candidate adds tests the project never ran, until they ran tests.newTestAttempts times. A test
 * that both passed and failed on the tree is flaky; one that failed every attempt failed. This
 * module is pure: runs in, what to do next and the merged report out.
 */

/** One run of the check: its command's result and its report as read. */
export interface Attempt {
  r: CommandResult;
  report: ReportReading;
}

/** A test as the record keeps it: its outcome over every attempt. */
export type AttemptedTest = TestOutcome & { attempts: number; failedAttempts: number; isNew?: boolean };

export interface AttemptPlan {
  /** Tests that failed on the first attempt. */
  failing: Set<string>;
  /** Tests the project has never run in this check (only when it ran the check's tests before). */
  fresh: Set<string>;
}

const testsOf = (a: Attempt): TestOutcome[] => (a.report && "report" in a.report ? a.report.report.tests : []);

/** What the first attempt asks for: which tests failed, which are new. */
export function attemptPlan(first: Attempt, known: { known: Set<string>; hasHistory: boolean }): AttemptPlan {
  const tests = testsOf(first);
  return {
    failing: new Set(tests.filter((t) => t.status === "failed").map((t) => t.id)),
    fresh: known.hasHistory
      ? new Set(tests.filter((t) => t.status !== "skipped" && !known.known.has(t.id)).map((t) => t.id))
      : new Set(),
  };
}

/** Whether to run the check once more. */
export function wantsAnother(done: readonly Attempt[], plan: AttemptPlan, cfg: RhumbatronConfig["tests"]): boolean {
  const n = done.length;
  if (plan.fresh.size > 0 && n < cfg.newTestAttempts) return true;
  if (plan.failing.size === 0 || n >= cfg.failingAttempts) return false;
  const passedOnce = new Set(
    done.flatMap((a) =>
      testsOf(a)
        .filter((t) => t.status === "passed")
        .map((t) => t.id),
    ),
  );
  return [...plan.failing].some((id) => !passedOnce.has(id));
}

/**
 * The attempts as one reading: each test's outcome over all of them (failed if it failed on any,
 * with how many), the counts recounted, and the result of the first attempt that failed (or the
 * first) as the command's.
 */
export function mergeAttempts(attempts: readonly Attempt[], plan: AttemptPlan): Attempt {
  const first = attempts[0] as Attempt;
  if (attempts.length === 1 && plan.fresh.size === 0) return first;
  const r = attempts.find((a) => a.r.exitCode !== 0)?.r ?? first.r;
  if (!first.report || !("report" in first.report)) return { r, report: first.report };
  const byId = new Map<string, AttemptedTest>();
  for (const a of attempts) {
    for (const t of testsOf(a)) {
      const seen = byId.get(t.id);
      const failed = t.status === "failed" ? 1 : 0;
      const ran = t.status === "skipped" ? 0 : 1;
      if (!seen) {
        byId.set(t.id, {
          ...t,
          attempts: ran,
          failedAttempts: failed,
          ...(plan.fresh.has(t.id) ? { isNew: true } : {}),
        });
        continue;
      }
      seen.attempts += ran;
      seen.failedAttempts += failed;
      if (failed && seen.status !== "failed") Object.assign(seen, { status: "failed", message: t.message });
      else if (ran && seen.status === "skipped") seen.status = t.status;
    }
  }
  const tests = [...byId.values()].sort((a, b) => Number(b.status === "failed") - Number(a.status === "failed"));
  const failed = tests.filter((t) => t.status === "failed").length;
  const skipped = tests.filter((t) => t.status === "skipped").length;
  const base = first.report.report;
  const report: TestReport = {
    format: base.format,
    tests,
    counts: { tests: base.counts.tests, failed, skipped, passed: Math.max(0, base.counts.tests - failed - skipped) },
  };
  return { r, report: { report } };
}

/** What the attempts said beyond the first, for the record's detail: "3 attempts; flaky: a (failed 1 of 3)". */
export function attemptsDetail(attempts: readonly Attempt[], merged: Attempt): string {
  if (attempts.length === 1) return "";
  const tests = merged.report && "report" in merged.report ? (merged.report.report.tests as AttemptedTest[]) : [];
  const flaky = tests.filter((t) => t.failedAttempts > 0 && t.failedAttempts < t.attempts);
  const named = flaky
    .slice(0, 5)
    .map((t) => `${[...t.suite, t.name].join(" > ")} (failed ${t.failedAttempts} of ${t.attempts})`);
  return `${attempts.length} attempts${named.length ? `; flaky: ${named.join("; ")}` : ""}`;
}
