import type { GateResult } from "@rhumbatron/core";
import {
  activeProjectPolicy,
  getCandidate,
  listTests,
  promoteCandidate,
  setTestQuarantine,
  updateProjectPolicy,
} from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import {
  candidateFor,
  importedProject,
  NODE_TEST_CHECKS,
  type TestWorld,
  testWorld,
  verificationDeps,
} from "../test-world.ts";
import { storeSourceProbe } from "./landing.ts";
import { drainVerifications } from "./runner.ts";

/**
 * Flaky is not broken (docs/flaky-tests.md), through the real verification workflow on a project of
 * node:test tests: a test that fails one run in three makes its Candidate flaky, not passing; once
 * an admin quarantines it, the next Candidate lands with the quarantine named in its gate. A test
 * that fails every run turns broken and is never quarantined by the policy's rule, which does
 * quarantine the flaky one.
 */
const t = useTestDatabase();

/** Fails the first run in each fresh checkout, then passes twice: one run in three. */
const SOMETIMES = [
  'test("sometimes fails", () => {',
  '  const n = fs.existsSync(".runs") ? Number(fs.readFileSync(".runs", "utf8")) : 0;',
  '  fs.writeFileSync(".runs", String(n + 1));',
  '  assert.notEqual(n % 3, 0, "fails one run in three");',
  "});",
];

function project(extra: string[] = []) {
  return {
    "package.json": JSON.stringify({ name: "flaky-lib", type: "module" }, null, 2),
    "src/add.js": "export const add = (a, b) => a + b;\n",
    "test/add.test.js": [
      'import { test } from "node:test";',
      'import assert from "node:assert/strict";',
      'import fs from "node:fs";',
      'import { add } from "../src/add.js";',
      'test("adds two numbers", () => assert.equal(add(2, 3), 5));',
      ...SOMETIMES,
      ...extra,
      "",
    ].join("\n"),
    ".rhumbatron/checks.yml": NODE_TEST_CHECKS,
  };
}

const verify = (w: TestWorld) => drainVerifications(verificationDeps(w));
const view = (w: TestWorld, candidateId: string) => getCandidate(t.db, { tenantId: "ten_a", candidateId }, w.config);
const edit = (requestId: string) => ({
  requestId,
  tasks: [{ key: "a", editPlan: [{ op: "write" as const, path: `src/${requestId}.js`, content: "export {};\n" }] }],
});

describe("flaky tests", () => {
  it("marks a Candidate flaky, not passing; after quarantine the next one lands with the quarantine named", async () => {
    const w = await testWorld(t.db);
    const projectId = await importedProject(w, project());
    const first = await candidateFor(w, projectId, edit("one"));
    expect((await verify(w))[0]).toMatchObject({ candidateId: first.candidateId, outcome: "rejected" });
    const rejected = await view(w, first.candidateId);
    expect(rejected.gate?.gaps).toEqual([
      expect.objectContaining({
        checkId: "tests",
        gap: "flaky",
        detail: "flaky: sometimes fails (failed 1 of 2 attempts)",
      }),
    ]);
    expect(rejected.evidence.find((e) => e.checkId === "tests")?.detail).toContain(
      "2 attempts; flaky: sometimes fails (failed 1 of 2)",
    );
    const now = () => new Date();
    const [flaky] = await listTests(t.db, { tenantId: "ten_a", projectId }, now());
    expect(flaky).toMatchObject({
      name: "sometimes fails",
      status: "flaky",
      runs: 1,
      flakyRuns: 1,
      rate: "flaky on 1 of 1 run",
      delayed: [first.candidateId],
      quarantine: null,
    });
    const changed = await t.db.outboxRow.findMany({ where: { eventType: "test.status_changed" } });
    expect(changed.map((r) => (r.envelope as { payload: object }).payload)).toEqual([
      expect.objectContaining({ testId: flaky?.testId, status: "flaky", previous: "ok", quarantined: false }),
    ]);

    const q = await setTestQuarantine(
      t.db,
      {
        tenantId: "ten_a",
        projectId,
        checkId: "tests",
        testId: flaky?.testId ?? "",
        actorId: "usr_admin",
        quarantine: { reason: "fails one run in three; #12 fixes it" },
      },
      { ...w.deps, now },
    );
    expect(q).toMatchObject({ changed: true, row: { quarantine: { owner: "usr_admin", auto: false } } });

    const second = await candidateFor(w, projectId, edit("two"));
    expect((await verify(w))[0]).toMatchObject({ candidateId: second.candidateId, outcome: "verified" });
    const gate = (await view(w, second.candidateId)).gate as GateResult;
    expect(gate.promotable).toBe(true);
    expect(gate.quarantined).toEqual([{ checkId: "tests", testId: flaky?.testId, name: "sometimes fails" }]);
    expect(gate.verdicts.find((v) => v.checkId === "tests")?.detail).toBe(
      "satisfied; quarantined, not blocking: sometimes fails (failed 1 of 2 attempts)",
    );
    const promoted = await promoteCandidate(
      t.db,
      { tenantId: "ten_a", actorId: "usr_approver", candidateId: second.candidateId },
      w.deps,
      storeSourceProbe({ ...w.deps, source: w.store }),
    );
    expect(promoted).toMatchObject({ outcome: "promoted", generation: 1 });
  }, 240_000);

  it("turns a test that fails every run broken and never quarantines it by the policy, which quarantines the flaky one", async () => {
    const w = await testWorld(t.db);
    const projectId = await importedProject(w, project(['test("always fails", () => assert.equal(add(1, 1), 3));']));
    const policy = await activeProjectPolicy(t.db, projectId, w.config);
    await updateProjectPolicy(
      t.db,
      {
        tenantId: "ten_a",
        projectId,
        actorId: "usr_admin",
        document: { ...policy.document, autoQuarantine: { flakyRate: 0.5, minRuns: 1, days: 7 } },
      },
      w.deps,
    );
    for (const n of ["a", "b", "c"]) {
      const c = await candidateFor(w, projectId, edit(n));
      expect((await verify(w))[0]).toMatchObject({ candidateId: c.candidateId, outcome: "rejected" });
      const gaps = (await view(w, c.candidateId)).gate?.gaps ?? [];
      // Failed every attempt: the check failed, whatever happened to the flaky test.
      expect(gaps.map((g) => g.gap)).toEqual(["failed"]);
    }
    const rows = await listTests(t.db, { tenantId: "ten_a", projectId, filter: "all" }, new Date());
    const byName = new Map(rows.map((r) => [r.name, r]));
    expect(byName.get("always fails")).toMatchObject({ status: "broken", runs: 3, failedRuns: 3, quarantine: null });
    expect(byName.get("sometimes fails")).toMatchObject({
      status: "flaky",
      quarantine: { owner: "policy", auto: true },
    });
    expect(byName.get("adds two numbers")).toMatchObject({ status: "ok", runs: 3 });
    const events = await t.db.outboxRow.findMany({ where: { eventType: "test.status_changed" } });
    const said = events.map(
      (r) => (r.envelope as { payload: { name: string; status: string; quarantine: string | null } }).payload,
    );
    expect(said).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "sometimes fails", status: "flaky", quarantine: "entered" }),
        expect.objectContaining({ name: "always fails", status: "broken", quarantine: null }),
      ]),
    );
  }, 300_000);
});
