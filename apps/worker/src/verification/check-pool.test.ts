import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  type BlobObject,
  type BlobStore,
  DEFAULT_COMMAND_ALLOWLIST,
  type PlannedCheck,
  type Sandbox,
  type SandboxWorkspace,
} from "@rhumbatron/core";
import type { VerificationInput } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bubblewrapAvailable, bubblewrapSandbox, sandboxLimits } from "../sandbox/index.ts";
import { testConfig } from "../testing.ts";
import { limiter, runPlannedChecks } from "./check-pool.ts";
import { runCheck } from "./check-step.ts";
import type { SerializedEvidence, VerificationDeps } from "./verification-run.ts";

const PROJECT = "proj_6f1c9f8e-0000-4000-8000-0000000000c7";
const CANDIDATE = "cand_pool1";

let root: string;
let sandbox: Sandbox;

function memoryBlobs(): BlobStore {
  const objects = new Map<string, BlobObject>();
  return {
    put: async (key, body, metadata = {}) => void objects.set(key, { body, metadata }),
    get: async (key) => objects.get(key) ?? null,
    has: async (key) => objects.has(key),
    delete: async (key) => void objects.delete(key),
    list: async (prefix) => [...objects.keys()].filter((k) => k.startsWith(prefix)).sort(),
  };
}

const node = (code: string) => ["node", "-e", code];
/** A TAP report on stdout: `pass` passing tests, then `fail` failing ones. */
const counts = (pass: number, fail: number) => {
  const lines = [
    "TAP version 13",
    `1..${pass + fail}`,
    ...Array.from({ length: pass }, (_, i) => `ok ${i + 1} - passes ${i + 1}`),
    ...Array.from({ length: fail }, (_, i) => `not ok ${pass + i + 1} - fails ${i + 1}`),
  ];
  return `console.log(${JSON.stringify(lines.join("\n"))});`;
};
const planned = (id: PlannedCheck["id"], kind: PlannedCheck["kind"], argv: string[]): PlannedCheck => ({
  id,
  kind,
  timeoutSeconds: 60,
  argv,
  reason: "test",
  ...(kind === "build" ? { prepares: true } : { report: { format: "tap" as const } }),
});

/**
 * A project with a prepared dependency folder (node_modules/dep) and checks that read what `build`
 * built, one that fails with output, and one that writes into node_modules.
 */
const CHECKS: PlannedCheck[] = [
  planned(
    "build",
    "build",
    node("require('fs').mkdirSync('dist'); require('fs').writeFileSync('dist/out.txt', 'built'); console.log('built')"),
  ),
  // Passes only when build's output is there (it ran first, and the copy holds it).
  planned(
    "targeted",
    "unit",
    node(
      `const t = require('fs').readFileSync('dist/out.txt', 'utf8'); if (t !== 'built') process.exit(3); ${counts(2, 0)}`,
    ),
  ),
  planned("unit", "unit", node(`${counts(3, 0)} console.log(require('./node_modules/dep/index.js'))`)),
  // The failing one: its exit code, counts and output tail must be the same whichever way it runs.
  planned(
    "security",
    "unit",
    node(`${counts(1, 2)} console.error('not ok 2 - authorization denies viewers'); process.exit(1)`),
  ),
  planned("protected-invariant-cart", "unit", node(`${counts(4, 0)} console.log(process.cwd())`)),
];

async function project(dirName: string): Promise<SandboxWorkspace> {
  const ws = await sandbox.open({ projectId: PROJECT, dirName });
  await mkdir(join(ws.path, ".git"), { recursive: true });
  await writeFile(join(ws.path, ".git", "HEAD"), "ref: refs/heads/main\n");
  await mkdir(join(ws.path, "node_modules", "dep"), { recursive: true });
  await writeFile(join(ws.path, "node_modules", "dep", "index.js"), "module.exports = 'dep 1.0';\n");
  return ws;
}

// A check with a test report asks the project's test history which of its tests are new (attempts.ts).
const t = useTestDatabase();

function deps(blobs: BlobStore, concurrency: number): VerificationDeps {
  return {
    db: t.db,
    config: { ...testConfig, checks: { ...testConfig.checks, concurrency } },
    blobs,
    now: () => new Date(),
    sandbox,
  } as unknown as VerificationDeps;
}

const input = { project: { id: PROJECT }, candidate: { id: CANDIDATE } } as unknown as VerificationInput;

/** Runs the checks through the pool and returns each one's Evidence, as the workflow would record it. */
async function verify(ws: SandboxWorkspace, checks: PlannedCheck[], concurrency: number) {
  const d = deps(memoryBlobs(), concurrency);
  const evidence = new Map<string, SerializedEvidence>();
  const wsPaths = new Map<string, string>();
  await runPlannedChecks(
    {
      config: d.config,
      recorded: async (c) => evidence.has(c.id),
      record: async (own, c) => {
        wsPaths.set(c.id, own.path);
        evidence.set(c.id, await runCheck(d, input, own, c, new Date()));
      },
      restore: async () => {},
    },
    ws,
    checks,
  );
  return { evidence, wsPaths };
}

/** What a reader of the Evidence sees, without the clock (duration, completion time). */
const comparable = (e: SerializedEvidence | undefined) => {
  if (!e) return undefined;
  const { durationMs: _d, completedAt: _c, ...rest } = e;
  return rest;
};

beforeAll(async () => {
  const probe = await bubblewrapAvailable();
  if (!probe.ok) throw new Error(`bubblewrap cannot run here (${probe.reason}); apt-get install -y bubblewrap`);
  root = await mkdtemp(join(tmpdir(), "rhumbatron-pool-"));
  sandbox = await bubblewrapSandbox({
    root,
    toolchainPaths: [dirname(process.execPath)],
    allowlist: DEFAULT_COMMAND_ALLOWLIST,
    limits: sandboxLimits(testConfig),
  });
}, 60_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("checks run at once", () => {
  it("records the same Evidence as one at a time, a failing check among passing ones included", async () => {
    // The same Candidate's directory both times (what a command prints may name it).
    const one = await verify(await project("cand-pool1"), CHECKS, 1);
    await (await sandbox.open({ projectId: PROJECT, dirName: "cand-pool1" })).remove();
    const many = await verify(await project("cand-pool1"), CHECKS, 3);

    expect([...many.evidence.keys()].sort()).toEqual(CHECKS.map((c) => c.id).sort());
    for (const c of CHECKS)
      expect(comparable(many.evidence.get(c.id)), c.id).toEqual(comparable(one.evidence.get(c.id)));
    const security = many.evidence.get("security");
    expect(security).toMatchObject({ status: "fail", metrics: { exitCode: 1, failed: 2, passed: 1 } });
    expect(security?.outputTail).toContain("not ok 2 - authorization denies viewers");
    expect(many.evidence.get("targeted")).toMatchObject({ status: "pass", coverage: "checked_supported" });
    // Run at once, every check but build had a copy of its own; one at a time, all shared one workspace.
    const ownDirs = new Set(CHECKS.filter((c) => c.id !== "build").map((c) => many.wsPaths.get(c.id)));
    expect(ownDirs.size).toBe(CHECKS.length - 1);
    expect(new Set(one.wsPaths.values()).size).toBe(1);
  }, 120_000);

  it("gives each check its own copy of the prepared node_modules: a write in one reaches no other", async () => {
    const ws = await project("cand-pool2");
    const write = (id: PlannedCheck["id"]) =>
      planned(
        id,
        "unit",
        node(
          `const fs = require('fs'); const seen = fs.existsSync('node_modules/dep/written-by'); fs.writeFileSync('node_modules/dep/written-by', '${id}'); fs.appendFileSync('node_modules/dep/index.js', '// ${id}\\n'); fs.writeFileSync('dist/out.txt', '${id}'); ${counts(1, 0)} if (seen) process.exit(9)`,
        ),
      );
    const checks = [CHECKS[0] as PlannedCheck, write("unit"), write("security"), write("protected-invariant-cart")];
    const { evidence } = await verify(ws, checks, 2);
    // Each writer found no other's file (it would exit 9), whichever ran first.
    for (const id of ["unit", "security", "protected-invariant-cart"]) {
      expect(evidence.get(id), id).toMatchObject({ status: "pass", metrics: { exitCode: 0 } });
    }
    // The prepared tree itself is as build left it: no write reached it, and the copies are gone.
    expect(await readFile(join(ws.path, "node_modules", "dep", "index.js"), "utf8")).toBe(
      "module.exports = 'dep 1.0';\n",
    );
    expect(await readFile(join(ws.path, "dist", "out.txt"), "utf8")).toBe("built");
    await expect(readFile(join(ws.path, "node_modules", "dep", "written-by"), "utf8")).rejects.toThrow();
    await ws.remove();
  }, 120_000);
});

describe("limiter", () => {
  it("never runs more than n at once, and runs every one", async () => {
    const limit = limiter(2);
    let active = 0;
    let most = 0;
    const gates: (() => void)[] = [];
    const runs = Array.from({ length: 5 }, (_, i) =>
      limit(async () => {
        active++;
        most = Math.max(most, active);
        await new Promise<void>((resolve) => gates.push(resolve));
        active--;
        return i;
      }),
    );
    // Open the gates one by one as runs arrive at them.
    for (let opened = 0; opened < 5; opened++) {
      while (gates.length === 0) await new Promise((r) => setImmediate(r));
      gates.shift()?.();
    }
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
  });
});
