/**
 * A test's health in its project (docs/flaky-tests.md), from its outcomes tree after tree (pure).
 * A check with a test report runs more than once on a tree while a test of it failed and has not
 * passed there yet; so one tree's outcome of one test is over all those attempts:
 *   passed  every attempt passed;      failed  every attempt failed;
 *   flaky   it both passed and failed on the same tree;   skipped  it did not run.
 * Health: `flaky` once it was flaky on a tree, `broken` once it failed every attempt on
 * `brokenAfter` trees in a row, `ok` again after `healthyAfterPasses` passing trees in a row (a
 * broken test that passes is fixed at once). A quarantine keeps a test's failures from blocking;
 * it ends at its expiry, or when the test is healthy again. The policy's rule quarantines flaky
 * tests only, never broken ones, and its quarantine ends when the test turns broken.
 */
export const TEST_HEALTHS = ["ok", "flaky", "broken"] as const;
export type TestHealth = (typeof TEST_HEALTHS)[number];
export type TreeOutcome = "passed" | "failed" | "flaky" | "skipped";

export interface Quarantine {
  at: Date;
  /** Who put it there: a user's ID, or "policy". */
  owner: string;
  reason: string;
  expiresAt: Date;
  /** By the policy's rule, not by a person. */
  auto: boolean;
}

export interface TestHealthState {
  status: TestHealth;
  statusSince: Date;
  runs: number;
  flakyRuns: number;
  failedRuns: number;
  consecutivePasses: number;
  consecutiveFailures: number;
  quarantine: Quarantine | null;
}

/** The policy's rule (PolicyDocument.autoQuarantine). */
export interface AutoQuarantineRule {
  flakyRate: number;
  minRuns: number;
  days: number;
}

export interface HealthRules {
  brokenAfter: number;
  healthyAfterPasses: number;
  autoQuarantine: AutoQuarantineRule | null;
}

export interface HealthStep {
  state: TestHealthState;
  /** The health before, when it changed. */
  statusFrom: TestHealth | null;
  /** The quarantine began or ended with this outcome. */
  quarantine: "entered" | "left" | null;
}

/** One test's outcome over `attempts` runs of its check on one tree, `failedAttempts` of them failed. */
export function treeOutcome(attempts: number, failedAttempts: number, ran: boolean): TreeOutcome {
  if (!ran || attempts === 0) return "skipped";
  if (failedAttempts === 0) return "passed";
  return failedAttempts >= attempts ? "failed" : "flaky";
}

/** A quarantine that still holds at `now` (an expired one no longer waives anything). */
export function quarantineHolds(q: Pick<Quarantine, "expiresAt"> | null, now: Date): boolean {
  return q !== null && q.expiresAt.getTime() > now.getTime();
}

/** "flaky on 2 of 9 runs" */
export function flakyRateText(s: Pick<TestHealthState, "flakyRuns" | "runs">): string {
  return `flaky on ${s.flakyRuns} of ${s.runs} run${s.runs === 1 ? "" : "s"}`;
}

const fresh = (now: Date): TestHealthState => ({
  status: "ok",
  statusSince: now,
  runs: 0,
  flakyRuns: 0,
  failedRuns: 0,
  consecutivePasses: 0,
  consecutiveFailures: 0,
  quarantine: null,
});

/** The test's health after one more tree's outcome. */
export function nextTestHealth(
  prev: TestHealthState | null,
  outcome: TreeOutcome,
  now: Date,
  rules: HealthRules,
): HealthStep {
  const before = prev ?? fresh(now);
  if (outcome === "skipped") return { state: before, statusFrom: null, quarantine: null };
  const s: TestHealthState = { ...before, runs: before.runs + 1 };
  if (outcome === "passed") {
    s.consecutivePasses += 1;
    s.consecutiveFailures = 0;
    if (s.status === "broken" || (s.status === "flaky" && s.consecutivePasses >= rules.healthyAfterPasses)) {
      s.status = "ok";
    }
  } else if (outcome === "failed") {
    s.failedRuns += 1;
    s.consecutiveFailures += 1;
    s.consecutivePasses = 0;
    if (s.consecutiveFailures >= rules.brokenAfter) s.status = "broken";
  } else {
    s.flakyRuns += 1;
    s.consecutivePasses = 0;
    s.consecutiveFailures = 0;
    s.status = "flaky";
  }
  const statusFrom = s.status === before.status ? null : before.status;
  if (statusFrom) s.statusSince = now;
  return { state: s, statusFrom, quarantine: nextQuarantine(before, s, now, rules) };
}

/** Sets `s.quarantine` for the step and says whether one began or ended. */
function nextQuarantine(
  before: TestHealthState,
  s: TestHealthState,
  now: Date,
  rules: HealthRules,
): HealthStep["quarantine"] {
  const q = before.quarantine;
  if (q) {
    const healthy = s.consecutivePasses >= rules.healthyAfterPasses;
    const ends = !quarantineHolds(q, now) || healthy || (q.auto && s.status === "broken");
    if (!ends) return null;
    s.quarantine = null;
    return "left";
  }
  const rule = rules.autoQuarantine;
  if (!rule || s.status !== "flaky" || s.runs < rule.minRuns || s.flakyRuns / s.runs < rule.flakyRate) return null;
  s.quarantine = {
    at: now,
    owner: "policy",
    reason: `${flakyRateText(s)} (the policy quarantines at ${Math.round(rule.flakyRate * 100)} % over ${rule.minRuns} runs)`,
    expiresAt: new Date(now.getTime() + rule.days * 86_400_000),
    auto: true,
  };
  return "entered";
}
