import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, join as joinPath } from "node:path";
import {
  type AgentChoice,
  type CheckRule,
  commandIds,
  DEFAULT_COMMAND_ALLOWLIST,
  DEFAULT_POLICY,
  type EditStep,
  loadConfig,
  type ProjectChecks,
  type RhumbatronConfig,
  repoNamespace,
  scriptedProvider,
  type VerificationPolicy,
} from "@rhumbatron/core";
import { shopChecks } from "@rhumbatron/core/testing";
import {
  createCandidate,
  createChange,
  type Db,
  importProject,
  localFolderBlobStore,
  workflowStartHandler,
} from "@rhumbatron/db";
import { consumeQueue, enqueueCommand, pgNotifyNudger, withTransaction } from "@rhumbatron/runtime";
import { onTestFailed } from "vitest";
import { executeRun, type RunnerDeps } from "./agents/runner.ts";
import { buildFunctions } from "./functions/index.ts";
import { createSandbox, sandboxLimits } from "./sandbox/index.ts";
import { provisionHandler } from "./source/handlers.ts";
import { SourceStore } from "./source/store.ts";
import { captureLogs, startNudgeOnlyExecutor } from "./testing.ts";
import { runBrowserCheck } from "./verification/browser-check.ts";
import { playwrightMounts } from "./verification/playwright-check.ts";
import type { VerificationDeps } from "./verification/verification-run.ts";

/**
 * Test support only: a real source store, blob folder and Sandbox in a temporary folder, projects
 * provisioned from the template, and Changes whose Tasks an Agent ran for real, composed into a
 * Candidate.
 */
const TYPESCRIPT = dirname(createRequire(import.meta.url).resolve("typescript/package.json"));
/** The Sandbox's toolchain as the worker mounts it (main.ts): node, TypeScript, Playwright and Chromium. */
export const TOOLCHAIN = [dirname(process.execPath), TYPESCRIPT, ...playwrightMounts()];

/**
 * `nodeBinDir`: the Node the Sandbox's commands run on (test-nodes.ts); default this process's.
 * `extraToolchain`: more read-only mounts (the agent programs' folders, as main.ts adds them).
 */
export async function testWorld(
  db: Db,
  config: RhumbatronConfig = loadConfig("dev"),
  options: { nodeBinDir?: string; extraToolchain?: readonly string[] } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), "rh-world-"));
  const root = join(dir, "git", repoNamespace(config.env));
  const now = () => new Date();
  const store = new SourceStore({ db, config, now, root });
  const blobs = localFolderBlobStore(join(dir, "blobs"));
  const logs = captureLogs();
  const sandbox = await createSandbox({
    root: join(dir, "sandboxes"),
    toolchainPaths: [
      ...(options.nodeBinDir ? [options.nodeBinDir, TYPESCRIPT, ...playwrightMounts()] : TOOLCHAIN),
      ...(options.extraToolchain ?? []),
    ],
    allowlist: DEFAULT_COMMAND_ALLOWLIST,
    limits: sandboxLimits(config),
    log: logs.logger,
  });
  const deps = { db, config, nudger: pgNotifyNudger, now, source: store, blobs };
  return { db, dir, root, config, store, blobs, sandbox, logs, deps };
}
export type TestWorld = Awaited<ReturnType<typeof testWorld>>;

/** A browser check that fails the test if the plan asks for one (the plans used here do not). */
export const noBrowserCheck: VerificationDeps["browserCheck"] = async () => {
  throw new Error("the browser check is not expected here");
};

/**
 * The verification workflow's parts on this world's store, Sandbox and blobs: what each
 * verification test passes to runVerification, with the parts a test changes given in `o`.
 */
export function verificationDeps(
  w: TestWorld,
  o: Partial<Pick<VerificationDeps, "policy" | "projectChecks" | "browserCheck" | "sandbox" | "reviewer">> = {},
): VerificationDeps {
  return {
    db: w.db,
    config: w.config,
    nudger: pgNotifyNudger,
    now: () => new Date(),
    source: w.store,
    sandbox: o.sandbox ?? w.sandbox,
    blobs: w.blobs,
    browserCheck: o.browserCheck ?? noBrowserCheck,
    // A test's policy comes with the checks it names: the policy decides which apply (policyOnlyChecks).
    ...(o.policy ? { policy: o.policy, projectChecks: o.projectChecks ?? policyOnlyChecks() } : {}),
    ...(o.reviewer ? { reviewer: o.reviewer } : {}),
  };
}

export async function provisionedProject(w: TestWorld, tenantId = "ten_a"): Promise<string> {
  const projectId = `proj_${randomUUID()}`;
  await w.db.tenant.upsert({
    where: { id: tenantId },
    create: { id: tenantId, slug: tenantId, name: tenantId },
    update: {},
  });
  await w.db.project.create({ data: { id: projectId, tenantId, name: projectId } });
  await withTransaction(w.db, (ctx) =>
    enqueueCommand(
      ctx,
      { commandId: commandIds.provision(projectId), commandType: "project.provision", projectId, payload: {} },
      w.deps,
    ),
  );
  const r = await consumeQueue(w.db, "integration", [provisionHandler(w.deps)], { ...w.deps, owner: "t" });
  if (r.actions.ack !== 1) throw new Error(`provisioning failed: ${JSON.stringify(r)}`);
  return projectId;
}

/**
 * A project imported from a repository of `files` (one commit on `main`, made by command-line git),
 * through the real import path: importProject, then project.provision on the integration queue.
 */
export async function importedProject(
  w: TestWorld,
  files: Record<string, string | Uint8Array>,
  tenantId = "ten_a",
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "rh-imported-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=Ada", "-c", "user.email=ada@example.com", ...args], {
      cwd: dir,
      env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    });
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("commit", "-q", "-m", "the project as it is");
  await w.db.tenant.upsert({
    where: { id: tenantId },
    create: { id: tenantId, slug: tenantId, name: tenantId },
    update: {},
  });
  const { projectId } = await importProject(
    w.db,
    { tenantId, name: `imported-${randomUUID().slice(0, 8)}`, from: dir, branch: null },
    w.deps,
  );
  const r = await consumeQueue(w.db, "integration", [provisionHandler(w.deps)], { ...w.deps, owner: "t" });
  if (r.actions.ack !== 1) throw new Error(`import failed: ${JSON.stringify(r)}`);
  return projectId;
}

export interface TaskEdit {
  key: string;
  dependsOn?: string[];
  /** What the Task expects to touch (its intents); default none. */
  paths?: string[];
  editPlan: EditStep[];
  /** This Task's own Agent (core agents/choice.ts); default the project's. */
  agent?: AgentChoice;
  /** Attempts side by side (core taskAttempts): each its own Agent, and the rule that picks. */
  attempts?: { agents: AgentChoice[]; pick: "person" | "first_verified" | "fewest_lines" };
}

/** A Change of scripted Tasks, as a user asks for it (createChange, user usr_test); returns its ID. */
export async function createScriptedChange(
  w: TestWorld,
  projectId: string,
  c: {
    requestId: string;
    title: string;
    tasks: TaskEdit[];
    riskTier?: "low" | "medium" | "high" | "critical";
    goals?: { p95LatencyMs?: number };
    invariants?: string[];
    contractChanges?: { added: string[]; removed: string[]; changed: string[] };
    tenantId?: string;
    landWhenReady?: boolean;
  },
): Promise<string> {
  const { changeId } = await createChange(
    w.db,
    {
      tenantId: c.tenantId ?? "ten_a",
      projectId,
      clientRequestId: c.requestId,
      createdBy: { kind: "user", id: "usr_test" },
      input: {
        title: c.title,
        riskTier: c.riskTier ?? "low",
        description: "",
        goals: c.goals ?? {},
        invariants: c.invariants ?? [],
        contractChanges: c.contractChanges ?? { added: [], removed: [], changed: [] },
        tasks: c.tasks.map((t) => ({
          key: t.key,
          title: t.key,
          dependsOn: t.dependsOn ?? [],
          intents: { paths: t.paths ?? [], prefixes: [] },
          editPlan: t.editPlan,
          ...(t.agent ? { agent: t.agent } : {}),
          ...(t.attempts ? { attempts: t.attempts } : {}),
        })) as never,
      },
      ...(c.landWhenReady ? { landWhenReady: true } : {}),
    },
    w.deps,
  );
  return changeId;
}

/**
 * A Change whose Tasks an Agent runs one after another (real forks, commits and ChangeSets), then
 * the Candidate composed from them, its verification instance started.
 */
export async function candidateFor(
  w: TestWorld,
  projectId: string,
  c: Omit<Parameters<typeof createScriptedChange>[2], "title">,
): Promise<{ changeId: string; candidateId: string }> {
  const changeId = await createScriptedChange(w, projectId, { ...c, title: `Change ${c.requestId}` });
  const tasks = await w.db.task.findMany({ where: { changeId }, orderBy: { position: "asc" } });
  for (const task of tasks) {
    const { result } = await runTaskDirectly(w, task);
    if (result.outcome !== "completed") throw new Error(`task ${task.key}: ${result.outcome} ${result.detail}`);
  }
  const { candidateId } = await withTransaction(w.db, (ctx) => createCandidate(ctx, changeId, w.deps, null));
  if (!candidateId) throw new Error(`no Candidate was created for ${changeId}`);
  // The verification.start command becomes the workflow instance.
  await consumeQueue(w.db, "verification", [workflowStartHandler(w.deps)], { ...w.deps, owner: "t" });
  return { changeId, candidateId };
}

/** Claims a run for the Task by hand and executes it with the scripted Agent (no queue, no wake). */
export async function runTaskDirectly(
  w: TestWorld,
  task: { id: string; key: string; changeId: string },
  extra: Partial<RunnerDeps> = {},
  runId = `run_${randomUUID()}`,
) {
  const agentId = `agt_${task.key}`;
  await w.db.task.update({ where: { id: task.id }, data: { state: "running", dispatched: true, agentId } });
  await w.db.agentRun.create({
    data: {
      id: runId,
      taskId: task.id,
      changeId: task.changeId,
      agentId,
      wakeCommandId: `cmd_${runId}`,
      reason: "dispatch",
      status: "running",
    },
  });
  const result = await executeRun(
    {
      ...w.deps,
      sandbox: w.sandbox,
      provider: scriptedProvider,
      allowlist: [...DEFAULT_COMMAND_ALLOWLIST],
      ...extra,
    },
    runId,
  );
  return { runId, agentId, result };
}

/**
 * The whole worker on the test database: every function of the registry (publisher, event router,
 * queues, Agent runner, verification and release workflows) on a local executor woken by
 * LISTEN/NOTIFY, with the scripted Agent. Stop it after the test.
 */
export async function startFullWorker(
  w: TestWorld,
  databaseUrl: string,
  o: { policy?: VerificationPolicy; projectChecks?: ProjectChecks } = {},
) {
  const functions = buildFunctions({
    config: w.config,
    nudger: pgNotifyNudger,
    blobs: w.blobs,
    db: w.db,
    source: w.store,
    sandbox: w.sandbox,
    provider: scriptedProvider,
    allowlist: [...DEFAULT_COMMAND_ALLOWLIST],
    browserCheck: runBrowserCheck,
    releaseRoot: joinPath(w.dir, "releases"),
    ...(o.policy ? { policy: o.policy, projectChecks: o.projectChecks ?? policyOnlyChecks() } : {}),
  });
  return startNudgeOnlyExecutor({ db: w.db, databaseUrl, logs: w.logs, functions, config: w.config });
}

/**
 * A node one-liner for a test check: it writes a JUnit report of `pass` passing and `fail` failing
 * tests where the shop's checks file has its `targeted` check read one (dist/targeted.junit.xml),
 * and exits 1 when a test failed.
 */
export function junitCommand(pass: number, fail = 0, path = "dist/targeted.junit.xml"): string[] {
  const cases = [
    ...Array.from({ length: pass }, (_, i) => `<testcase name="passes ${i + 1}"/>`),
    ...Array.from(
      { length: fail },
      (_, i) => `<testcase name="fails ${i + 1}"><failure message="expected 1, got 2"/></testcase>`,
    ),
  ].join("");
  const code = [
    "const fs = require('fs');",
    `fs.mkdirSync(require('path').dirname(${JSON.stringify(path)}), { recursive: true });`,
    `fs.writeFileSync(${JSON.stringify(path)}, ${JSON.stringify(`<testsuites>${cases}</testsuites>`)});`,
    `console.log(${JSON.stringify(`${pass} passed, ${fail} failed`)});`,
    fail ? "process.exit(1);" : "",
  ].join(" ");
  return ["node", "-e", code];
}

/**
 * The shop's checks file as a test's policy sees it: every check the shop declares, with its rules
 * by risk tier taken out, so the test's policy says which checks each tier runs; `build` and
 * `targeted` still apply to every Change, and triggers by path, invariant or goal still add theirs.
 */
export function policyOnlyChecks(): ProjectChecks {
  const shop = shopChecks();
  // Rules by risk tier go (the test's policy lists the tiers' checks); triggers by path, invariant or goal stay.
  const untiered = (when: CheckRule[] | undefined) => when?.filter((r) => !r.tiers);
  return {
    source: shop.source,
    file: {
      ...shop.file,
      checks: shop.file.checks.map((c) => (c.when ? { ...c, when: untiered(c.when) } : c)),
    },
  };
}

/** Checks that really run in the Sandbox but take a moment: node one-liners instead of the template's scripts. */
export function fastChecksPolicy(over: Partial<VerificationPolicy> = {}): VerificationPolicy {
  const node = (code: string) => ["node", "-e", code];
  const passing = junitCommand(2);
  return {
    id: DEFAULT_POLICY.id,
    version: DEFAULT_POLICY.version,
    requiredChecksByRisk: { low: ["build", "targeted"], medium: ["build", "targeted"], high: ["build", "targeted"] },
    humanGateRiskTiers: ["high", "critical"],
    commands: { build: node("console.log('built')"), targeted: passing, unit: passing },
    ...over,
  };
}

/** The outer limit of a test that runs Changes to promotion on the whole worker (and of each wait in it). */
export const WHOLE_WORKER_LIMIT = 480_000;

/**
 * The opening of the tests that run Changes to promotion on the whole worker: a world on `db`, one
 * provisioned project, and the whole worker with fastChecksPolicy, pushed on `running` (the test
 * file's stoppedAfterEach list, so it stops after the test).
 */
export async function wholeWorkerWithProject(
  db: Db,
  databaseUrl: string,
  running: { stop(): Promise<void> }[],
): Promise<{ w: TestWorld; projectId: string }> {
  const w = await testWorld(db);
  const projectId = await provisionedProject(w);
  running.push(await startFullWorker(w, databaseUrl, { policy: fastChecksPolicy() }));
  return { w, projectId };
}

/**
 * Where a whole-worker test stood, for its failure message: the project's Changes, Candidates,
 * queued commands, verification instances and dead letters, and the worker's last warnings and
 * errors. A test that times out prints it (landing.test.ts: onTestFailed), so a wedge explains itself.
 */
export async function worldSnapshot(w: TestWorld, projectId: string) {
  const db = w.db;
  const [changes, candidates, messages, instances, deadLetters] = await Promise.all([
    db.change.findMany({
      where: { projectId },
      select: { id: true, status: true, landWhenReady: true, pickedAttempt: true },
    }),
    db.candidate.findMany({
      where: { projectId },
      select: { id: true, changeId: true, status: true, baseGeneration: true, recomposedFrom: true, alternative: true },
    }),
    db.queueMessage.findMany({
      where: { projectId },
      select: {
        queue: true,
        commandType: true,
        deliveries: true,
        availableAt: true,
        leaseOwner: true,
        lastError: true,
      },
    }),
    db.workflowInstance.findMany({
      where: { status: { not: "succeeded" } },
      select: { instanceId: true, workflow: true, status: true, error: true, leasedUntil: true },
    }),
    db.deadLetter.findMany({ where: { projectId }, select: { id: true, reason: true, status: true } }),
  ]);
  const project = await db.project.findUnique({ where: { id: projectId }, select: { canonicalGeneration: true } });
  const runs = await db.agentRun.findMany({
    where: { change: { projectId } },
    select: { id: true, alternative: true, status: true, error: true, reason: true },
  });
  const noisy = w.logs.lines.filter((l) => typeof l.level === "number" && l.level >= 40).slice(-30);
  return { project, changes, candidates, runs, messages, instances, deadLetters, warnings: noisy };
}

/** A failed or timed-out whole-worker test prints where its project stood (worldSnapshot). */
export function explainOnFailure(w: TestWorld, projectId: string) {
  onTestFailed(async () => {
    const snapshot = await worldSnapshot(w, projectId).catch((err: unknown) => ({ unreadable: String(err) }));
    console.error(`where ${projectId} stood:\n${JSON.stringify(snapshot, null, 1)}`);
  });
}

/** A one-Task Change (Task `a`, intents on `path`) that writes `content` to `path`, or deletes it when none is given. */
export function oneFileChange(
  w: TestWorld,
  projectId: string,
  c: { requestId: string; title: string; path: string; content?: string; landWhenReady: boolean },
): Promise<string> {
  const { path, content } = c;
  return createScriptedChange(w, projectId, {
    requestId: c.requestId,
    title: c.title,
    tasks: [
      {
        key: "a",
        paths: [path],
        editPlan: [content === undefined ? { op: "delete", path } : { op: "write", path, content }],
      },
    ],
    landWhenReady: c.landWhenReady,
  });
}

/** Waits until every one of the Changes is promoted, under WHOLE_WORKER_LIMIT. */
export function waitForPromoted(w: TestWorld, changeIds: string[], what = `${changeIds.join(", ")} promoted`) {
  return waitUntil(
    what,
    async () =>
      (await w.db.change.findMany({ where: { id: { in: changeIds } }, select: { status: true } })).map((c) => c.status),
    (s) => s.length === changeIds.length && s.every((x) => x === "promoted"),
    WHOLE_WORKER_LIMIT,
  );
}

/** Polls `probe` until `ok` holds, under one generous outer limit; the error shows the last value. */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T>,
  ok: (v: T) => boolean,
  ms = 240_000,
): Promise<T> {
  const end = Date.now() + ms;
  let v = await probe();
  while (!ok(v)) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 200));
    v = await probe();
  }
  return v;
}

/** A checks file with one check, `tests`: node:test over test/add.test.js, read from its JUnit report. */
export const NODE_TEST_CHECKS = [
  "version: 1",
  "checks:",
  "  - id: tests",
  "    run: [node, --test, --test-reporter=junit, --test-reporter-destination=tests.xml, test/add.test.js]",
  "    report: { format: junit, path: tests.xml }",
  "    timeout: 120",
  "",
].join("\n");
