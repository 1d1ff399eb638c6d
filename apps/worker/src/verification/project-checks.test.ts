import { sourceKeys, type VerificationPlan } from "@rhumbatron/core";
import { getCandidate, readCandidateChecks } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { candidateFor, importedProject, type TestWorld, testWorld, verificationDeps } from "../test-world.ts";
import { atLeast, versionIn } from "./project-checks.ts";
import { drainVerifications } from "./runner.ts";

/**
 * A project's own checks (docs/checks-file.md), through the real verification workflow on a
 * project imported from a repository nobody here shaped for Rhumbatron: the file is read from the
 * Candidate's base, commands run in the Sandbox, test reports are read per test, a broken file or
 * an unmet requirement refuses the Candidate with what to do, and a repository without a file gets
 * detected checks and the file to commit.
 */
const t = useTestDatabase();

/** A tiny library with two node:test tests and a checks file: a prepare step and a JUnit test check. */
const LIBRARY = {
  "package.json": JSON.stringify({ name: "tiny-lib", type: "module", scripts: { test: "node --test" } }, null, 2),
  "src/add.js": "export const add = (a, b) => a + b;\n",
  "test/add.test.js": [
    'import { test } from "node:test";',
    'import assert from "node:assert/strict";',
    'import { add } from "../src/add.js";',
    'test("adds two numbers", () => assert.equal(add(2, 3), 5));',
    'test("adds zero", () => assert.equal(add(2, 0), 2));',
    "",
  ].join("\n"),
  ".rhumbatron/checks.yml": [
    "version: 1",
    "requires: [node>=20]",
    "checks:",
    "  - id: prepare",
    "    run: [node, -e, \"require('fs').mkdirSync('out', { recursive: true })\"]",
    "    prepares: true",
    "    timeout: 60",
    "  - id: tests",
    "    run: [node, --test, --test-reporter=spec, --test-reporter-destination=stdout, --test-reporter=junit, --test-reporter-destination=out/tests.xml, test/add.test.js]",
    "    report: { format: junit, path: out/tests.xml }",
    "    timeout: 120",
    "",
  ].join("\n"),
};

const verify = (w: TestWorld) => drainVerifications(verificationDeps(w));
const view = (w: TestWorld, candidateId: string) => getCandidate(t.db, { tenantId: "ten_a", candidateId }, w.config);

describe("a project's own checks file", () => {
  it("composes two Tasks' lines added at the same place of a file its base names append-only, and conflicts without it", async () => {
    const w = await testWorld(t.db);
    const appendTask = (key: string) => ({
      key,
      paths: ["CHANGELOG.md"],
      editPlan: [
        { op: "replace" as const, path: "CHANGELOG.md", find: "# Changes\n", replace: `# Changes\n- ${key}\n` },
      ],
    });
    const withLog = { ...LIBRARY, "CHANGELOG.md": "# Changes\n" };
    const named = await importedProject(w, {
      ...withLog,
      ".rhumbatron/checks.yml": `${LIBRARY[".rhumbatron/checks.yml"]}appendOnly: [CHANGELOG.md]\n`,
    });
    const a = await candidateFor(w, named, { requestId: "log-union", tasks: [appendTask("a"), appendTask("b")] });
    expect((await verify(w))[0]).toMatchObject({ candidateId: a.candidateId, outcome: "verified" });
    const patch = await w.blobs.get(sourceKeys.candidatePatch(named, a.candidateId));
    expect(new TextDecoder().decode(patch?.body)).toContain(" # Changes\n+- a\n+- b\n");

    const plain = await importedProject(w, withLog);
    const b = await candidateFor(w, plain, { requestId: "log-plain", tasks: [appendTask("a"), appendTask("b")] });
    expect((await verify(w))[0]).toMatchObject({ candidateId: b.candidateId, outcome: "rejected" });
    expect((await view(w, b.candidateId)).rejectionReason).toBe("merge conflict");
  }, 120_000);

  it("verifies a Change with the project's own test command, each test recorded by name", async () => {
    const w = await testWorld(t.db);
    const projectId = await importedProject(w, LIBRARY);
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "green",
      tasks: [
        { key: "a", editPlan: [{ op: "write", path: "src/sub.js", content: "export const sub = (a, b) => a - b;\n" }] },
      ],
    });
    expect((await verify(w))[0]).toMatchObject({ candidateId, outcome: "verified" });
    const c = await view(w, candidateId);
    expect(c.plan?.checksSource).toMatchObject({ kind: "file", path: ".rhumbatron/checks.yml" });
    expect(c.plan?.checks.map((k) => [k.id, k.kind])).toEqual([
      ["prepare", "build"],
      ["tests", "unit"],
    ]);
    const tests = c.evidence.find((e) => e.checkId === "tests");
    expect(tests).toMatchObject({
      status: "pass",
      coverage: "checked_supported",
      detail: "2 passed, 0 skipped, 0 failed",
    });
    expect(((tests?.tests ?? []) as { name: string; status: string }[]).map((x) => [x.name, x.status])).toEqual([
      ["adds two numbers", "passed"],
      ["adds zero", "passed"],
    ]);
  }, 180_000);

  it("judges a Change by the base's file, never its own: one that weakens the file and breaks a test is rejected with the test named, behind a person", async () => {
    const w = await testWorld(t.db);
    const projectId = await importedProject(w, LIBRARY);
    const weakened = LIBRARY[".rhumbatron/checks.yml"].replace(/test\/add\.test\.js\]/, "--test-name-pattern=nothing]");
    expect(weakened).not.toBe(LIBRARY[".rhumbatron/checks.yml"]);
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "weakens",
      tasks: [
        {
          key: "a",
          editPlan: [
            { op: "write", path: "src/add.js", content: "export const add = (a, b) => a + b + 1;\n" },
            { op: "write", path: ".rhumbatron/checks.yml", content: weakened },
          ],
        },
      ],
    });
    expect((await verify(w))[0]).toMatchObject({ candidateId, outcome: "rejected" });
    const c = await view(w, candidateId);
    const plan = c.plan as VerificationPlan;
    expect(plan.editsTheGate).toEqual([".rhumbatron/checks.yml"]);
    expect(plan.humanGate).toBe(true);
    expect(plan.humanGateReasons).toContain(
      "the change edits the project's gate (.rhumbatron/checks.yml); it applies from the next generation",
    );
    // The base's command ran: both tests, and the broken one is named with its assertion.
    const gap = c.gaps.find((g) => g.checkId === "tests");
    expect(gap?.gap).toBe("failed");
    expect(gap?.detail).toMatch(/2 failed; failing: adds two numbers \(.*6 !== 5.*\); adds zero/);
    expect(c.evidence.find((e) => e.checkId === "tests")?.command).toContain("test/add.test.js");
  }, 180_000);

  it("refuses a Candidate whose base's checks file does not parse, naming the line and the field", async () => {
    const w = await testWorld(t.db);
    const projectId = await importedProject(w, {
      ...LIBRARY,
      ".rhumbatron/checks.yml": "version: 1\nchecks:\n  - id: tests\n    run: [node, --test]\n    timeout: 5000\n",
    });
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "broken-file",
      tasks: [{ key: "a", editPlan: [{ op: "write", path: "NOTES.md", content: "notes\n" }] }],
    });
    expect((await verify(w))[0]).toMatchObject({ candidateId, outcome: "rejected" });
    const c = await view(w, candidateId);
    expect(c.rejectionReason).toBe(".rhumbatron/checks.yml at the base does not parse; fix it on main");
    const e = c.evidence.find((x) => x.checkId === "checks-file");
    expect(e).toMatchObject({ status: "fail" });
    expect(e?.detail).toMatch(/^\.rhumbatron\/checks\.yml:5: checks\[0\]\.timeout: at most 900 s/);
    expect(c.plan).toBeNull();
  }, 120_000);

  it("refuses a Candidate whose requirements the worker cannot meet, saying what to install; no check runs", async () => {
    const w = await testWorld(t.db);
    const projectId = await importedProject(w, {
      ...LIBRARY,
      ".rhumbatron/checks.yml": LIBRARY[".rhumbatron/checks.yml"].replace(
        "requires: [node>=20]",
        "requires: [node>=99, no-such-tool-here]",
      ),
    });
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "requires",
      tasks: [{ key: "a", editPlan: [{ op: "write", path: "NOTES.md", content: "notes\n" }] }],
    });
    expect((await verify(w))[0]).toMatchObject({ candidateId, outcome: "rejected" });
    const c = await view(w, candidateId);
    expect(c.rejectionReason).toBe("the worker cannot meet what the project requires; nothing was checked");
    const rejected = await t.db.outboxRow.findFirstOrThrow({
      where: { eventType: "candidate.rejected", envelope: { path: ["payload", "candidateId"], equals: candidateId } },
    });
    const gaps = (rejected.envelope as { payload: { gaps: string[] } }).payload.gaps;
    expect(gaps[0]).toMatch(/^requires: node>=99: the worker has node \d+\.\d+\.\d+; install node 99 or later/);
    expect(gaps[1]).toMatch(
      /^requires: no-such-tool-here does not run in the worker's Sandbox .*install no-such-tool-here/,
    );
    expect(c.evidence.filter((e) => e.checkId === "tests")).toEqual([]);
  }, 120_000);

  it("runs setup steps in the Sandbox before the checks, keeps their log, and refuses the Candidate when one fails", async () => {
    const w = await testWorld(t.db);
    const withSetup = (code: string) => ({
      ...LIBRARY,
      "test/setup.test.js":
        'import { test } from "node:test";\nimport { readFileSync } from "node:fs";\ntest("setup ran", () => { if (readFileSync("vendor/ready", "utf8") !== "yes") throw new Error("no"); });\n',
      ".rhumbatron/checks.yml": LIBRARY[".rhumbatron/checks.yml"]
        .replace(
          "checks:\n",
          `setup:\n  - id: vendor\n    run: [node, -e, "${code}"]\n    timeout: 60\n    cache: [vendor]\n    key: [package.json]\nchecks:\n`,
        )
        .replace("test/add.test.js]", "test/add.test.js, test/setup.test.js]"),
    });
    const good = await importedProject(
      w,
      withSetup("require('fs').mkdirSync('vendor'); require('fs').writeFileSync('vendor/ready', 'yes')"),
    );
    const ok = await candidateFor(w, good, {
      requestId: "setup-ok",
      tasks: [{ key: "a", editPlan: [{ op: "write", path: "NOTES.md", content: "notes\n" }] }],
    });
    expect((await verify(w))[0]).toMatchObject({ candidateId: ok.candidateId, outcome: "verified" });
    const okView = await view(w, ok.candidateId);
    const first = okView.evidence.find((e) => e.checkId === "setup-vendor");
    expect(first).toMatchObject({ kind: "setup", status: "pass", metrics: { cacheHit: 0, exitCode: 0 } });
    expect(first?.detail).toMatch(/^prepared; saved to the setup cache \(key [0-9a-f]{12}\): vendor$/);
    expect(okView.evidence.find((e) => e.checkId === "tests")?.detail).toBe("3 passed, 0 skipped, 0 failed");

    // The next Candidate with the same key file gets vendor/ from the cache: the command does not
    // run, and the test that reads vendor/ready still passes on what was copied in.
    const again = await candidateFor(w, good, {
      requestId: "setup-again",
      tasks: [{ key: "a", editPlan: [{ op: "write", path: "NOTES2.md", content: "more notes\n" }] }],
    });
    expect((await verify(w))[0]).toMatchObject({ candidateId: again.candidateId, outcome: "verified" });
    const againView = await view(w, again.candidateId);
    const hit = againView.evidence.find((e) => e.checkId === "setup-vendor");
    expect(hit).toMatchObject({ kind: "setup", status: "pass", metrics: { cacheHit: 1 }, outputKey: null });
    expect(hit?.detail).toBe(
      `restored from the setup cache (key ${first?.detail.slice(40, 52)}): vendor; the command did not run`,
    );
    expect(againView.evidence.find((e) => e.checkId === "tests")?.detail).toBe("3 passed, 0 skipped, 0 failed");

    // A Change to a key file is a miss: the step runs again.
    const rekeyed = await candidateFor(w, good, {
      requestId: "setup-rekeyed",
      tasks: [
        { key: "a", editPlan: [{ op: "replace", path: "package.json", find: '"tiny-lib"', replace: '"tiny-lib-2"' }] },
      ],
    });
    expect((await verify(w))[0]).toMatchObject({ candidateId: rekeyed.candidateId, outcome: "verified" });
    const rekeyedView = await view(w, rekeyed.candidateId);
    expect(rekeyedView.evidence.find((e) => e.checkId === "setup-vendor")?.metrics).toMatchObject({ cacheHit: 0 });

    const bad = await importedProject(w, withSetup("console.error('registry unreachable'); process.exit(3)"));
    const failed = await candidateFor(w, bad, {
      requestId: "setup-fails",
      tasks: [{ key: "a", editPlan: [{ op: "write", path: "NOTES.md", content: "notes\n" }] }],
    });
    expect((await verify(w))[0]).toMatchObject({ candidateId: failed.candidateId, outcome: "rejected" });
    const failedView = await view(w, failed.candidateId);
    expect(failedView.rejectionReason).toBe("setup step vendor did not finish; no check ran");
    const setup = failedView.evidence.find((e) => e.checkId === "setup-vendor");
    expect(setup).toMatchObject({ kind: "setup", status: "fail", detail: "exited with 3" });
    expect(setup?.outputTail).toContain("registry unreachable");
    expect(failedView.evidence.filter((e) => e.checkId === "tests")).toEqual([]);
  }, 240_000);
});

describe("a repository without a checks file", () => {
  it("runs the checks detected from what is there, marked detected, with the file to commit", async () => {
    const w = await testWorld(t.db);
    const { ".rhumbatron/checks.yml": _, ...bare } = LIBRARY;
    const projectId = await importedProject(w, bare);
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "detected",
      tasks: [{ key: "a", editPlan: [{ op: "write", path: "NOTES.md", content: "notes\n" }] }],
    });
    expect((await verify(w))[0]).toMatchObject({ candidateId, outcome: "verified" });
    const c = await view(w, candidateId);
    expect(c.plan?.checksSource).toMatchObject({
      kind: "detected",
      reasons: expect.arrayContaining([expect.stringContaining("package.json")]),
    });
    expect(c.evidence.find((e) => e.checkId === "test")).toMatchObject({ status: "pass", command: "npm test" });
    const checks = await readCandidateChecks(t.db, w.blobs, { tenantId: "ten_a", candidateId });
    expect(checks.source).toBe("detected");
    if (checks.source !== "detected") return;
    expect(checks.proposal).toContain("id: test");
    expect(await w.blobs.has(sourceKeys.proposedChecks(projectId, c.baseCommit))).toBe(true);
  }, 180_000);

  it("refuses a Candidate when nothing can be detected, saying to add the file: never verified with nothing run", async () => {
    const w = await testWorld(t.db);
    const projectId = await importedProject(w, { "README.md": "# Notes\n", "notes/a.txt": "a\n" });
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "nothing",
      tasks: [{ key: "a", editPlan: [{ op: "write", path: "notes/b.txt", content: "b\n" }] }],
    });
    expect((await verify(w))[0]).toMatchObject({ candidateId, outcome: "rejected" });
    const c = await view(w, candidateId);
    expect(c.rejectionReason).toMatch(/^no \.rhumbatron\/checks\.yml at the base, and no checks could be detected/);
    expect(c.evidence.map((e) => e.checkId)).toEqual(["checks-file"]);
  }, 120_000);
});

describe("reading a tool's version", () => {
  it("takes the first dotted number and compares part by part", () => {
    expect(versionIn("v20.20.2\n")).toBe("20.20.2");
    expect(versionIn("Python 3.11.2")).toBe("3.11.2");
    expect(versionIn("pytest 7.2.1")).toBe("7.2.1");
    expect(versionIn("no version here")).toBeNull();
    expect(atLeast("20.20.2", "20")).toBe(true);
    expect(atLeast("3.9.1", "3.11")).toBe(false);
    expect(atLeast("3.11", "3.11.0")).toBe(true);
    expect(atLeast("19.9", "20")).toBe(false);
  });
});
