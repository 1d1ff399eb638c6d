import {
  type PlannedCheck,
  type ProjectChecks,
  parseChecksFile,
  type Sandbox,
  type SandboxWorkspace,
} from "@rhumbatron/core";
import { getCandidate, loadVerificationInput } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { canCopy } from "../sandbox/workspace.ts";
import { candidateFor, importedProject, type TestWorld, testWorld, verificationDeps } from "../test-world.ts";
import { decideReuse, inputsKeyOf, type ReuseInputs, recordReusedStep } from "./reuse.ts";
import { drainVerifications } from "./runner.ts";
import { type VerificationDeps, verificationRun } from "./verification-run.ts";

/**
 * Reused Evidence (docs/checks-file.md, Reused Evidence), through the real workflow on an imported
 * project: real
 * Postgres, real git, commands in the real Sandbox. What ran is counted at the Sandbox's seam.
 */
const t = useTestDatabase();

const TESTS_ARGV =
  "node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination=out/tests.xml test/add.test.js";
const PREPARE = "node -e require('fs').mkdirSync('out', { recursive: true })";

const LIBRARY = {
  "package.json": JSON.stringify({ name: "tiny-lib", type: "module", scripts: { test: "node --test" } }, null, 2),
  "src/add.js": "export const add = (a, b) => a + b;\n",
  "test/add.test.js": [
    'import { test } from "node:test";',
    'import assert from "node:assert/strict";',
    'import { add } from "../src/add.js";',
    'test("adds two numbers", () => assert.equal(add(2, 3), 5));',
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
    `    run: [${TESTS_ARGV.split(" ").join(", ")}]`,
    "    report: { format: junit, path: out/tests.xml }",
    "    timeout: 120",
    "",
  ].join("\n"),
};

/** The real Sandbox, with every command it is asked to run written down. */
function counting(sandbox: Sandbox, ran: string[]): Sandbox {
  const wrap = (ws: SandboxWorkspace): SandboxWorkspace => {
    const out: SandboxWorkspace & { copy?: (label: string) => Promise<SandboxWorkspace> } = {
      path: ws.path,
      run: (cmd) => {
        ran.push(cmd.argv.join(" "));
        return ws.run(cmd);
      },
      remove: () => ws.remove(),
    };
    if (canCopy(ws)) out.copy = async (label) => wrap(await ws.copy(label));
    return out;
  };
  return {
    kind: sandbox.kind,
    isolates: sandbox.isolates,
    billing: sandbox.billing,
    open: async (d) => wrap(await sandbox.open(d)),
  };
}

const edit = (content: string) => ({
  tasks: [{ key: "a", editPlan: [{ op: "write" as const, path: "src/add.js", content }] }],
});
const GOOD = "export const add = (a, b) => b + a;\n";
const BAD = "export const add = (a, b) => a - b;\n";

async function verifyCounting(w: TestWorld, over: (d: VerificationDeps) => VerificationDeps = (d) => d) {
  const ran: string[] = [];
  const r = await drainVerifications(over(verificationDeps(w, { sandbox: counting(w.sandbox, ran) })));
  return { r, ran };
}

const evidence = (candidateId: string) => t.db.evidence.findMany({ where: { candidateId }, orderBy: { id: "asc" } });

describe("reused Evidence", () => {
  it("reuses a pass of the same project on an identical tree: a new record naming the first, and no command runs", async () => {
    const w = await testWorld(t.db);
    const projectId = await importedProject(w, LIBRARY);
    const a = await candidateFor(w, projectId, { requestId: "first", ...edit(GOOD) });
    const first = await verifyCounting(w);
    expect(first.r[0]).toMatchObject({ candidateId: a.candidateId, outcome: "verified" });
    expect(first.ran).toContain(TESTS_ARGV);
    const aRows = await evidence(a.candidateId);
    const aTests = aRows.find((e) => e.checkId === "tests");
    expect(aTests).toMatchObject({ status: "pass", coverage: "checked_supported", reusedFrom: null });
    expect(aTests?.inputsKey).toMatch(/^[0-9a-f]{64}$/);

    const b = await candidateFor(w, projectId, { requestId: "second", ...edit(GOOD) });
    const second = await verifyCounting(w);
    expect(second.r[0]).toMatchObject({ candidateId: b.candidateId, outcome: "verified" });
    // Neither check's command ran for the second Candidate.
    expect(second.ran).not.toContain(TESTS_ARGV);
    expect(second.ran).not.toContain(PREPARE);
    const candA = await t.db.candidate.findUniqueOrThrow({ where: { id: a.candidateId } });
    const candB = await t.db.candidate.findUniqueOrThrow({ where: { id: b.candidateId } });
    expect(candB.composedTree).toBe(candA.composedTree);
    expect(candA.composedTree).toMatch(/^[0-9a-f]{40}$/);
    for (const checkId of ["prepare", "tests"]) {
      const src = aRows.find((e) => e.checkId === checkId);
      const rows = (await evidence(b.candidateId)).filter((e) => e.checkId === checkId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        reusedFrom: src?.id,
        inputsKey: src?.inputsKey,
        status: "pass",
        coverage: "checked_supported",
        durationMs: 0,
        outputKey: src?.outputKey,
        command: src?.command,
      });
      expect(rows[0]?.id).not.toBe(src?.id);
      expect(rows[0]?.detail).toMatch(
        new RegExp(`^reused from ${a.candidateId} \\(${src?.id}\\): identical tree, command, setup and toolchains`),
      );
    }
    // The reader of the Candidate sees where it came from.
    const view = await getCandidate(t.db, { tenantId: "ten_a", candidateId: b.candidateId }, w.config);
    expect(view.evidence.find((e) => e.checkId === "tests")).toMatchObject({
      reusedFrom: { evidenceId: aTests?.id, candidateId: a.candidateId },
    });

    // A replayed evidence step (the workflow retried after the reuse) writes no second row.
    const input = await loadVerificationInput(t.db, b.candidateId);
    if (!input) throw new Error("no input");
    const v = verificationRun(verificationDeps(w), b.candidateId, input);
    const check = { id: "tests", kind: "unit", timeoutSeconds: 120, argv: [], reason: "" } as PlannedCheck;
    const src = {
      ...(aTests as NonNullable<typeof aTests>),
      status: "pass" as const,
      coverage: "checked_supported" as const,
      metrics: {},
      tests: null,
    };
    await recordReusedStep(v, check, aTests?.inputsKey ?? "", src);
    await t.db.workflowStep.deleteMany({ where: { instanceId: b.candidateId, step: "evidence:tests" } });
    await recordReusedStep(v, check, aTests?.inputsKey ?? "", src);
    expect((await evidence(b.candidateId)).filter((e) => e.checkId === "tests")).toHaveLength(1);
  }, 240_000);

  it("runs for real on the same tree when the checks at the base differ", async () => {
    const w = await testWorld(t.db);
    const projectId = await importedProject(w, LIBRARY);
    await candidateFor(w, projectId, { requestId: "file-1", ...edit(GOOD) });
    expect((await verifyCounting(w)).r[0]?.outcome).toBe("verified");
    // The base's checks file as the `checks` step would read it, with one timeout changed.
    const reading = parseChecksFile(LIBRARY[".rhumbatron/checks.yml"].replace("timeout: 120", "timeout: 121"));
    if (!reading.ok) throw new Error("the changed file does not parse");
    const changed: ProjectChecks = {
      source: { kind: "file", path: ".rhumbatron/checks.yml", commit: "0".repeat(40) },
      file: reading.file,
    };
    const b = await candidateFor(w, projectId, { requestId: "file-2", ...edit(GOOD) });
    const second = await verifyCounting(w, (d) => ({ ...d, projectChecks: changed }));
    expect(second.r[0]).toMatchObject({ candidateId: b.candidateId, outcome: "verified" });
    expect(second.ran).toContain(TESTS_ARGV);
    expect(second.ran).toContain(PREPARE);
    expect((await evidence(b.candidateId)).every((e) => e.reusedFrom === null)).toBe(true);
  }, 240_000);

  it("never reuses a failure: the failing check runs again, and so does the check that prepares its tree", async () => {
    const w = await testWorld(t.db);
    const projectId = await importedProject(w, LIBRARY);
    await candidateFor(w, projectId, { requestId: "bad-1", ...edit(BAD) });
    expect((await verifyCounting(w)).r[0]?.outcome).toBe("rejected");
    const b = await candidateFor(w, projectId, { requestId: "bad-2", ...edit(BAD) });
    const second = await verifyCounting(w);
    expect(second.r[0]).toMatchObject({ candidateId: b.candidateId, outcome: "rejected" });
    expect(second.ran).toContain(TESTS_ARGV);
    // `prepare` passed the first time, but the tests need the tree it leaves: it ran for real.
    expect(second.ran).toContain(PREPARE);
    const rows = await evidence(b.candidateId);
    expect(rows.find((e) => e.checkId === "tests")).toMatchObject({ status: "fail", reusedFrom: null });
    expect(rows.find((e) => e.checkId === "prepare")).toMatchObject({ status: "pass", reusedFrom: null });
  }, 240_000);

  it("never reuses another project's pass, and reuses nothing when verification.reuseEvidence is off", async () => {
    const w = await testWorld(t.db);
    const one = await importedProject(w, LIBRARY);
    const other = await importedProject(w, LIBRARY);
    await candidateFor(w, one, { requestId: "one", ...edit(GOOD) });
    expect((await verifyCounting(w)).r[0]?.outcome).toBe("verified");

    const b = await candidateFor(w, other, { requestId: "other", ...edit(GOOD) });
    const second = await verifyCounting(w);
    expect(second.r[0]).toMatchObject({ candidateId: b.candidateId, outcome: "verified" });
    expect(second.ran).toContain(TESTS_ARGV);
    expect((await evidence(b.candidateId)).every((e) => e.reusedFrom === null)).toBe(true);

    const c = await candidateFor(w, one, { requestId: "off", ...edit(GOOD) });
    const off = await verifyCounting(w, (d) => ({
      ...d,
      config: { ...d.config, verification: { ...d.config.verification, reuseEvidence: false } },
    }));
    expect(off.r[0]).toMatchObject({ candidateId: c.candidateId, outcome: "verified" });
    expect(off.ran).toContain(TESTS_ARGV);
    expect(off.ran).toContain(PREPARE);
    expect((await evidence(c.candidateId)).every((e) => e.reusedFrom === null)).toBe(true);
  }, 300_000);
});

describe("inputsKeyOf and decideReuse", () => {
  const project: ProjectChecks = {
    source: { kind: "file", path: ".rhumbatron/checks.yml", commit: "c1" },
    file: { version: 1, checks: [] } as unknown as ProjectChecks["file"],
  };
  const build: PlannedCheck = {
    id: "build",
    kind: "build",
    timeoutSeconds: 60,
    argv: ["make"],
    reason: "",
    prepares: true,
  };
  const unit: PlannedCheck = { id: "unit", kind: "unit", timeoutSeconds: 60, argv: ["make", "test"], reason: "" };
  const base: ReuseInputs = {
    tree: "t1",
    project,
    toolchain: { node: "v20.20.2" },
    baseCommit: "b1",
    contractChanges: {},
  };
  const key = (o: Partial<ReuseInputs> = {}, c = unit, plan = [build, unit]) => inputsKeyOf(c, plan, { ...base, ...o });

  it("changes with the tree, the check, the preparing check, the checks file and the toolchain, and with nothing else", () => {
    expect(key()).toBe(key());
    expect(key()).toBe(
      inputsKeyOf(
        { reason: "", argv: ["make", "test"], timeoutSeconds: 60, kind: "unit", id: "unit" },
        [build, unit],
        base,
      ),
    );
    // The base commit matters to the contract check only; a checks file at another commit with the same content is the same.
    expect(key({ baseCommit: "b2", project: { ...project, source: { ...project.source, commit: "c2" } } })).toBe(key());
    expect(key({ tree: "t2" })).not.toBe(key());
    expect(key({}, { ...unit, timeoutSeconds: 61 })).not.toBe(key());
    expect(key({}, unit, [{ ...build, argv: ["make", "all"] }, unit])).not.toBe(key());
    expect(key({ toolchain: { node: "v24.22.3" } })).not.toBe(key());
    expect(
      key({ project: { ...project, file: { version: 1, checks: [], setup: [] } as unknown as ProjectChecks["file"] } }),
    ).not.toBe(key());
    expect(key({ project: { source: { kind: "detected" } as ProjectChecks["source"], file: project.file } })).not.toBe(
      key(),
    );
    const contract: PlannedCheck = { ...unit, id: "contract", kind: "contract", procedure: "contract" };
    expect(key({ baseCommit: "b2" }, contract)).not.toBe(key({}, contract));
  });

  it("reuses a preparing check only when every other check is reused", () => {
    const hit = (id: string) => ({ id }) as never;
    expect(Object.keys(decideReuse([build, unit], { build: hit("b"), unit: hit("u") }))).toEqual(["build", "unit"]);
    expect(Object.keys(decideReuse([build, unit], { build: hit("b"), unit: null }))).toEqual([]);
    expect(Object.keys(decideReuse([build, unit], { build: null, unit: hit("u") }))).toEqual(["unit"]);
  });
});
