import { type CheckId, DEFAULT_POLICY, type VerificationPolicy } from "@rhumbatron/core";
import { getCandidate } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { candidateFor, provisionedProject, type TestWorld, testWorld, verificationDeps } from "../test-world.ts";
import { drainVerifications } from "./runner.ts";
import type { VerificationDeps } from "./verification-run.ts";

const t = useTestDatabase();

/**
 * A rejected Candidate's gap names its failure: the real verification workflow runs the real
 * command in the Sandbox on the composed tree, records the Evidence with its excerpt, and the gate
 * and the decision (what the Candidate page and `rhumbatron candidate show` read) carry it.
 */
const onlyChecks = (checks: CheckId[], commands: VerificationPolicy["commands"] = {}): VerificationPolicy => ({
  id: DEFAULT_POLICY.id,
  version: DEFAULT_POLICY.version,
  requiredChecksByRisk: { low: checks, medium: checks, high: checks },
  humanGateRiskTiers: ["high", "critical"],
  commands,
});

const verifier = (w: TestWorld, policy: VerificationPolicy): VerificationDeps => verificationDeps(w, { policy });

async function rejectedView(w: TestWorld, candidateId: string, policy: VerificationPolicy) {
  const [r] = await drainVerifications(verifier(w, policy));
  expect(r).toMatchObject({ candidateId, outcome: "rejected" });
  return getCandidate(t.db, { tenantId: "ten_a", candidateId }, w.config);
}

describe("a failed check's gap names its failure", () => {
  it("a type error: the build's gap says how npm run build exited and shows the compiler's error line first", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "type-error",
      riskTier: "medium",
      tasks: [
        {
          key: "a",
          editPlan: [{ op: "write", path: "src/quantity.ts", content: 'export const quantity: number = "two";\n' }],
        },
      ],
    });
    // The project's own build command (the template's `tsc -p tsconfig.json`).
    const view = await rejectedView(w, candidateId, onlyChecks(["build"]));
    const error = "src/quantity.ts(1,14): error TS2322: Type 'string' is not assignable to type 'number'.";
    const row = await t.db.evidence.findFirstOrThrow({ where: { candidateId, checkId: "build" } });
    expect(row.status).toBe("fail");
    expect(row.outputExcerpt?.split("\n")[0]).toBe(error);
    const [gap] = view.gaps;
    expect(gap).toMatchObject({ checkId: "build", gap: "failed", detail: "the check failed: exited with 1" });
    expect(gap?.excerpt[0]).toBe(error);
    expect(view.decision.reasons[0]).toBe(`build: failed: the check failed: exited with 1 — ${error}`);
  }, 180_000); // the template's real tsc on a busy 2-core machine

  it("a failing test: the test check's gap counts the tests and names the failing one with its assertion", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const test = [
      'import { test } from "node:test";',
      'import assert from "node:assert/strict";',
      'test("a cart of two mugs costs twice one", () => assert.equal(2 * 7, 15));',
      'test("an empty cart costs nothing", () => assert.equal(0, 0));',
      "",
    ].join("\n");
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "failing-test",
      riskTier: "medium",
      tasks: [{ key: "a", editPlan: [{ op: "write", path: "test/price.test.mjs", content: test }] }],
    });
    const view = await rejectedView(
      w,
      candidateId,
      // After the real build (which prepares dist/), TAP for a reader and the JUnit report the
      // shop's checks file has `targeted` read.
      onlyChecks(["build", "targeted"], {
        targeted: [
          "node",
          "--test",
          "--test-reporter=tap",
          "--test-reporter-destination=stdout",
          "--test-reporter=junit",
          "--test-reporter-destination=dist/targeted.junit.xml",
          "test/price.test.mjs",
        ],
      }),
    );
    const [gap] = view.gaps;
    expect(gap).toMatchObject({ checkId: "targeted", gap: "failed" });
    expect(gap?.detail).toMatch(
      /^the check failed: exited with 1; 1 passed, 0 skipped, 1 failed; failing: a cart of two mugs costs twice one \(Expected values to be strictly equal:.*14 !== 15/,
    );
    const row = await t.db.evidence.findFirstOrThrow({ where: { candidateId, checkId: "targeted" } });
    expect((row.tests as { name: string; status: string }[]).map((x) => [x.name, x.status])).toEqual([
      ["a cart of two mugs costs twice one", "failed"],
      ["an empty cart costs nothing", "passed"],
    ]);
    expect(gap?.excerpt.slice(0, 3)).toEqual([
      "not ok 1 - a cart of two mugs costs twice one",
      "  Expected values to be strictly equal:",
      "  14 !== 15",
    ]);
    expect(view.decision.reasons[0]).toMatch(
      /^targeted: failed: the check failed: exited with 1; 1 passed, 0 skipped, 1 failed; failing: a cart of two mugs .* — not ok 1 - a cart of two mugs costs twice one$/,
    );
  }, 180_000);
});
