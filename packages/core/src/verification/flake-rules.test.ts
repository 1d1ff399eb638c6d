import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import {
  type HealthRules,
  nextTestHealth,
  quarantineHolds,
  type TestHealthState,
  type TreeOutcome,
  treeOutcome,
} from "./flake-rules.ts";
import { type EvidenceRecord, type FailingTest, gateRequiredChecks, testKey } from "./gate.ts";
import { buildVerificationPlan, DEFAULT_POLICY } from "./plan.ts";
import { shopChecks } from "./shop-checks.testing.ts";

const rules: HealthRules = { brokenAfter: 3, healthyAfterPasses: 4, autoQuarantine: null };
const at = (n: number) => new Date(Date.UTC(2026, 11, 1) + n * 60_000);

/** The state after these outcomes, one per tree, from nothing. */
function after(outcomes: TreeOutcome[], r: HealthRules = rules, start: TestHealthState | null = null) {
  let s = start;
  const steps = outcomes.map((o, n) => {
    const step = nextTestHealth(s, o, at(n), r);
    s = step.state;
    return step;
  });
  return { state: s as TestHealthState, steps };
}

describe("treeOutcome", () => {
  it("is flaky only when a test both passed and failed on the tree", () => {
    expect(treeOutcome(3, 1, true)).toBe("flaky");
    expect(treeOutcome(3, 3, true)).toBe("failed");
    expect(treeOutcome(1, 0, true)).toBe("passed");
    expect(treeOutcome(2, 0, false)).toBe("skipped");
  });
});

describe("nextTestHealth", () => {
  it("marks a test flaky at its first flaky tree, and says the status changed", () => {
    const { state, steps } = after(["passed", "flaky"]);
    expect(state.status).toBe("flaky");
    expect(steps[1]?.statusFrom).toBe("ok");
    expect([state.runs, state.flakyRuns]).toEqual([2, 1]);
  });

  it("marks a test broken only after failing every attempt on brokenAfter trees in a row, and fixed at its next pass", () => {
    expect(after(["failed", "failed"]).state.status).toBe("ok");
    expect(after(["failed", "failed", "passed", "failed"]).state.status).toBe("ok");
    const broken = after(["failed", "failed", "failed"]);
    expect(broken.state.status).toBe("broken");
    expect(after(["passed"], rules, broken.state).state.status).toBe("ok");
  });

  it("keeps a flaky test flaky until healthyAfterPasses passing trees in a row", () => {
    const flaky = after(["flaky", "passed", "passed", "passed"]);
    expect(flaky.state.status).toBe("flaky");
    expect(after(["passed"], rules, flaky.state).state.status).toBe("ok");
  });

  it("leaves a skipped test as it was", () => {
    const { state } = after(["flaky"]);
    expect(nextTestHealth(state, "skipped", at(9), rules).state).toBe(state);
  });

  it("quarantines by the policy's rule only a flaky test over the rate and runs, and never a broken one", () => {
    const auto: HealthRules = { ...rules, autoQuarantine: { flakyRate: 0.3, minRuns: 3, days: 7 } };
    expect(after(["flaky", "passed"], auto).state.quarantine).toBeNull();
    const q = after(["flaky", "passed", "flaky"], auto);
    expect(q.steps[2]?.quarantine).toBe("entered");
    expect(q.state.quarantine).toMatchObject({
      owner: "policy",
      auto: true,
      expiresAt: new Date(at(2).getTime() + 7 * 86_400_000),
    });
    expect(after(["failed", "failed", "failed", "failed", "failed"], auto).state.quarantine).toBeNull();
    // Its own quarantine ends when the test turns broken; the test is never put back.
    const turned = after(["failed", "failed", "failed"], auto, q.state);
    expect(turned.state.status).toBe("broken");
    expect(turned.state.quarantine).toBeNull();
    expect(turned.steps.map((s) => s.quarantine)).toContain("left");
  });

  it("ends a quarantine after healthyAfterPasses passing trees, or at its expiry", () => {
    const q = { at: at(0), owner: "usr_1", reason: "r", expiresAt: at(100), auto: false };
    const held = after(["flaky"], rules).state;
    const inQ = { ...held, quarantine: q };
    const passing = after(["passed", "passed", "passed", "passed"], rules, inQ);
    expect(passing.steps.map((s) => s.quarantine)).toEqual([null, null, null, "left"]);
    const late = nextTestHealth({ ...inQ, quarantine: { ...q, expiresAt: at(0) } }, "flaky", at(1), rules);
    expect(late.quarantine).toBe("left");
    expect(quarantineHolds(q, at(99))).toBe(true);
    expect(quarantineHolds(q, at(100))).toBe(false);
  });

  it("counts every tree that ran, whatever the order (property)", () => {
    const outcome = fc.constantFrom<TreeOutcome>("passed", "failed", "flaky", "skipped");
    fc.assert(
      fc.property(fc.array(outcome, { maxLength: 40 }), (os) => {
        const { state } = after(os);
        const ran = os.filter((o) => o !== "skipped");
        if (ran.length === 0) return;
        expect(state.runs).toBe(ran.length);
        expect(state.flakyRuns).toBe(ran.filter((o) => o === "flaky").length);
        expect(state.failedRuns).toBe(ran.filter((o) => o === "failed").length);
        if (ran.includes("flaky") && ran.slice(ran.lastIndexOf("flaky")).length <= rules.healthyAfterPasses)
          expect(state.status).not.toBe("ok");
      }),
    );
  });
});

describe("the gate and test failures", () => {
  const config = loadConfig("dev");
  const plan = buildVerificationPlan(
    { riskTier: "low", invariants: [], goals: { p95LatencyMs: 200 } },
    [],
    DEFAULT_POLICY,
    config,
    shopChecks(),
  );
  const failing = (tests: FailingTest[], failed = tests.length) =>
    plan.checks.map(
      (c): EvidenceRecord => ({
        id: `ev_${c.id}`,
        checkId: c.id,
        status: c.id === "targeted" ? "fail" : "pass",
        coverage: "checked_supported",
        durationMs: 10,
        timeoutSeconds: 120,
        completedAt: at(1),
        metrics: c.id === "performance" ? { p95Ms: 1 } : c.id === "targeted" ? { failed } : {},
        outputKey: null,
        detail: "exited with 1",
        excerpt: null,
        failingTests: c.id === "targeted" ? tests : null,
      }),
    );
  const flakyT = { id: "a", name: "cart > adds", attempts: 3, failedAttempts: 1 };
  const brokenT = { id: "b", name: "cart > totals", attempts: 3, failedAttempts: 3 };

  it("has the targeted check in the shop's plan", () => {
    expect(plan.checks.map((c) => c.id)).toContain("targeted");
  });

  it("is a flaky gap, naming the test, when every failing test also passed on the tree", () => {
    const g = gateRequiredChecks(plan, failing([flakyT]));
    expect(g.promotable).toBe(false);
    expect(g.gaps).toEqual([
      expect.objectContaining({
        checkId: "targeted",
        gap: "flaky",
        detail: "flaky: cart > adds (failed 1 of 3 attempts)",
      }),
    ]);
    const fresh = gateRequiredChecks(plan, failing([{ ...flakyT, isNew: true }]));
    expect(fresh.gaps[0]?.detail).toBe("flaky new test: cart > adds (failed 1 of 3 attempts)");
  });

  it("fails the check when one failing test failed every attempt", () => {
    expect(gateRequiredChecks(plan, failing([flakyT, brokenT])).gaps[0]?.gap).toBe("failed");
  });

  it("lets quarantined failures through and names them; a test not quarantined still blocks", () => {
    const q = new Set([testKey("targeted", "a")]);
    const g = gateRequiredChecks(plan, failing([flakyT]), q);
    expect(g.promotable).toBe(true);
    expect(g.quarantined).toEqual([{ checkId: "targeted", testId: "a", name: "cart > adds" }]);
    expect(g.verdicts.find((v) => v.checkId === "targeted")?.detail).toBe(
      "satisfied; quarantined, not blocking: cart > adds (failed 1 of 3 attempts)",
    );
    expect(gateRequiredChecks(plan, failing([flakyT, brokenT]), q).gaps[0]?.gap).toBe("failed");
    expect(gateRequiredChecks(plan, failing([flakyT]), new Set([testKey("lint", "a")])).promotable).toBe(false);
  });

  it("never lets a check through whose report does not list every failing test", () => {
    const q = new Set([testKey("targeted", "a")]);
    expect(gateRequiredChecks(plan, failing([flakyT], 2), q).gaps[0]?.gap).toBe("failed");
  });
});
