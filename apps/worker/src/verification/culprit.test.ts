import type { Culprit } from "@rhumbatron/core";
import { getCandidate } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import {
  candidateFor,
  importedProject,
  NODE_TEST_CHECKS,
  runTaskDirectly,
  testWorld,
  verificationDeps,
} from "../test-world.ts";
import { drainVerifications } from "./runner.ts";

/**
 * The culprit Task (docs/flaky-tests.md), through the real verification workflow: a Change of
 * four Tasks whose third breaks a test is rejected, and composing prefixes of its ChangeSets
 * names that Task after two extra runs of the failing check, each one Evidence.
 */
const t = useTestDatabase();

const LIBRARY = {
  "package.json": JSON.stringify({ name: "culprit-lib", type: "module" }, null, 2),
  "src/add.js": "export const add = (a, b) => a + b;\n",
  "test/add.test.js": [
    'import { test } from "node:test";',
    'import assert from "node:assert/strict";',
    'import { add } from "../src/add.js";',
    'test("adds two numbers", () => assert.equal(add(2, 3), 5));',
    'test("adds zero", () => assert.equal(add(2, 0), 2));',
    'test("concatenates", () => assert.equal("a" + "b", "ab"));',
    "",
  ].join("\n"),
  // The same check, which says how to run named tests: the probes run only the failing ones.
  ".rhumbatron/checks.yml": NODE_TEST_CHECKS.replace(
    "    report:",
    () =>
      "    only: [node, --test, --test-reporter=junit, --test-reporter-destination=tests.xml, --test-name-pattern, '{pattern}', test/add.test.js]\n    report:",
  ),
};

const write = (key: string, path: string, content: string) => ({
  key,
  paths: [path],
  editPlan: [{ op: "write" as const, path, content }],
});

describe("the culprit Task", () => {
  it("names the third of four Tasks that broke a test after two extra runs, each recorded", async () => {
    const w = await testWorld(t.db);
    const projectId = await importedProject(w, LIBRARY);
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "four",
      tasks: [
        write("a", "src/sub.js", "export const sub = (a, b) => a - b;\n"),
        write("b", "src/mul.js", "export const mul = (a, b) => a * b;\n"),
        write("c", "src/add.js", "export const add = (a, b) => a + b + 1;\n"),
        write("d", "src/div.js", "export const div = (a, b) => a / b;\n"),
      ],
    });
    expect((await drainVerifications(verificationDeps(w)))[0]).toMatchObject({ candidateId, outcome: "rejected" });
    const row = await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } });
    const culprit = row.culprit as unknown as Culprit;
    expect(culprit.task).toMatchObject({ key: "c", title: "c", position: 3 });
    expect(culprit.of).toBe(4);
    expect(culprit.tests).toEqual(["adds two numbers", "adds zero"]);
    // Prefix 2 (a, b) passes, prefix 3 (a, b, c) fails: two extra runs, ceil(log2 4).
    expect(culprit.probes.map((p) => [p.prefix, p.failed])).toEqual([
      [2, false],
      [3, true],
    ]);
    const view = await getCandidate(t.db, { tenantId: "ten_a", candidateId }, w.config);
    const probes = view.evidence.filter((e) => e.checkId.startsWith("tests@"));
    expect(probes.map((e) => [e.checkId, e.status])).toEqual([
      ["tests@prefix-2", "pass"],
      ["tests@prefix-3", "fail"],
    ]);
    expect(probes[0]?.detail).toMatch(
      /^the first 2 of 4 ChangeSets: passes \(only the 2 failing test\(s\) run; 2 passed/,
    );
    // The test that did not fail is not run there (Node 20 lists it as skipped, later ones leave it out).
    const ran = (probes[0]?.tests ?? []) as { name: string; status: string }[];
    expect(ran.filter((x) => x.status !== "skipped").map((x) => x.name)).toEqual(["adds two numbers", "adds zero"]);
    // The gate still judges the Candidate's own record; the probes are Evidence beside it.
    expect(view.gate?.gaps.map((g) => [g.checkId, g.gap])).toEqual([["tests", "failed"]]);
    const rejected = await t.db.outboxRow.findFirstOrThrow({ where: { eventType: "candidate.rejected" } });
    expect((rejected.envelope as { payload: { gaps: string[] } }).payload.gaps).toContain(
      'culprit: Task c "c", ChangeSet 3 of 4, first fails tests (adds two numbers; adds zero); found in 2 extra runs of tests',
    );
    // Probes join no test's history: only the Candidate's own record did.
    expect(await t.db.testResult.count({ where: { candidateId } })).toBe(3);

    // Task c run again is told the failure in its Context Packet; Task a is not.
    const { changeId } = row;
    const [a, c] = await Promise.all(["a", "c"].map((key) => t.db.task.findFirstOrThrow({ where: { changeId, key } })));
    for (const task of [a, c]) await runTaskDirectly(w, task as NonNullable<typeof task>);
    const packets = await t.db.contextPacket.findMany({
      where: { purpose: "agent_run" },
      orderBy: { createdAt: "asc" },
    });
    const notes = packets.slice(-2).map((p) => p.note ?? "");
    expect(notes[0]).not.toContain("broke the check");
    expect(notes[1]).toContain(
      `Your Task's previous ChangeSet broke the check tests of Candidate ${candidateId}: the Change's ChangeSets before it pass that check`,
    );
    expect(notes[1]).toContain("Failing tests: adds two numbers; adds zero");
  }, 300_000);

  it("on a speculative stack: names the Task on the tree below; a selection that ran no failing test falls back to the whole check", async () => {
    const w = await testWorld(t.db);
    // `only` with a pattern that selects nothing: every probe must then run the whole check.
    const checks = NODE_TEST_CHECKS.replace(
      "    report:",
      () =>
        "    only: [node, --test, --test-reporter=junit, --test-reporter-destination=tests.xml, --test-name-pattern, '^no such test {pattern}$', test/add.test.js]\n    report:",
    );
    // A cached setup step: the probes restore it from the setup cache, as the Candidates did.
    const setup = "setup:\n  - id: vendor\n    run: [node, vendor.cjs]\n    cache: [vendor]\n    key: [package.json]\n";
    const projectId = await importedProject(w, {
      ...LIBRARY,
      "vendor.cjs":
        'require("node:fs").mkdirSync("vendor"); require("node:fs").writeFileSync("vendor/one.txt", "1");\n',
      ".rhumbatron/checks.yml": checks.replace("checks:\n", () => `${setup}checks:\n`),
    });
    const below = await candidateFor(w, projectId, {
      requestId: "below",
      landWhenReady: true,
      tasks: [write("a", "src/sub.js", "export const sub = (a, b) => a - b;\n")],
    });
    const first = (await drainVerifications(verificationDeps(w)))[0];
    expect(first, JSON.stringify(first)).toMatchObject({ outcome: "verified" });
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "above",
      landWhenReady: true,
      tasks: [
        write("m", "src/mul.js", "export const mul = (a, b) => a * b;\n"),
        write("c", "src/add.js", "export const add = (a, b) => a + b + 1;\n"),
      ],
    });
    const row = await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } });
    expect(row.stackedOn).toBe(below.candidateId);
    expect((await drainVerifications(verificationDeps(w)))[0]).toMatchObject({ candidateId, outcome: "rejected" });
    const culprit = (await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } }))
      .culprit as unknown as Culprit;
    // Prefix 1 (m) on the Candidate below passes, so c is the culprit: one extra run.
    expect(culprit.task).toMatchObject({ key: "c", position: 2 });
    expect(culprit.probes.map((p) => [p.prefix, p.failed])).toEqual([[1, false]]);
    const view = await getCandidate(t.db, { tenantId: "ten_a", candidateId }, w.config);
    const probe = view.evidence.find((e) => e.checkId === "tests@prefix-1");
    // The whole check ran: all three tests passed there, the failing ones among them.
    expect(probe?.detail).toMatch(/^the first 1 of 2 ChangeSets: passes \(setup vendor from the setup cache; 3 passed/);
  }, 300_000);
});
