import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  candidateFork,
  DEFAULT_COMMAND_ALLOWLIST,
  loadConfig,
  type RhumbatronConfig,
  scriptedProvider,
  sourceKeys,
  workspaceFork,
} from "@rhumbatron/core";
import {
  admitSandbox,
  checkRepoToken,
  createChange,
  issueRepoToken,
  reserveSandboxSeconds,
  retryTask,
  sweepSandboxReservations,
} from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { consumeQueue, enqueueCommand, pgNotifyNudger, requeueDeferred, withTransaction } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import type { LocalExecutor } from "../executors/local.ts";
import { buildFunctions } from "../functions/index.ts";
import { startGitHttpServer } from "../source/git-http.ts";
import { cleanupHandler, forksSweepHandler, provisionHandler } from "../source/handlers.ts";
import type { SourceStore } from "../source/store.ts";
import { stoppedAfterEach } from "../test-hooks.ts";
import { provisionedProject, runTaskDirectly, type TestWorld, testWorld } from "../test-world.ts";
import { startNudgeOnlyExecutor } from "../testing.ts";
import { runBrowserCheck } from "../verification/browser-check.ts";
import type { RunnerDeps } from "./runner.ts";

const t = useTestDatabase();
const running = stoppedAfterEach<LocalExecutor>();
function git(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile("git", args, { env }, (err, _stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
    );
  });
}

const world = (config: RhumbatronConfig = loadConfig("dev")) => testWorld(t.db, config);
const newProject = (w: TestWorld) => provisionedProject(w);

async function until<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean, ms = 100_000): Promise<T> {
  const end = Date.now() + ms;
  let v = await probe();
  while (!ok(v)) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
    v = await probe();
  }
  return v;
}

async function startWorker(w: TestWorld) {
  const functions = buildFunctions({
    config: w.config,
    nudger: pgNotifyNudger,
    blobs: w.blobs,
    db: t.db,
    source: w.store,
    sandbox: w.sandbox,
    provider: scriptedProvider,
    allowlist: [...DEFAULT_COMMAND_ALLOWLIST],
    browserCheck: runBrowserCheck,
    releaseRoot: join(w.dir, "releases"),
  });
  running.push(
    await startNudgeOnlyExecutor({ db: t.db, databaseUrl: t.url, logs: w.logs, functions, config: w.config }),
  );
}

const change = (tasks: unknown[]) => ({
  title: "Add a banner",
  riskTier: "low" as const,
  description: "",
  goals: {},
  invariants: [],
  contractChanges: { added: [], removed: [], changed: [] },
  tasks: tasks as never,
});

/**
 * A Change with one Task whose run is already claimed, executed directly by the runner (the
 * queue and wake paths are covered by the end-to-end test above).
 */
async function runOneTask(
  w: TestWorld,
  projectId: string,
  requestId: string,
  editPlan: unknown[] | undefined,
  extra: Partial<RunnerDeps> = {},
) {
  const { changeId } = await createChange(
    t.db,
    {
      tenantId: "ten_a",
      projectId,
      clientRequestId: requestId,
      createdBy: { kind: "user", id: "u" },
      input: change([
        {
          key: "a",
          title: "A",
          dependsOn: [],
          intents: { paths: [], prefixes: [] },
          ...(editPlan ? { editPlan } : {}),
        },
      ]),
    },
    w.deps,
  );
  const task = await t.db.task.findFirstOrThrow({ where: { changeId } });
  const { runId, result } = await runTaskDirectly(w, task, extra);
  return { changeId, task, runId, result };
}

describe("Sandbox reservations after a crash", () => {
  it("a run picked up again reuses its reservation; the sweep settles one whose run is gone", async () => {
    const w = await world();
    const projectId = await newProject(w);
    const counters = async (changeId: string) => {
      const rows = await t.db.usageCounter.findMany({ where: { counter: { startsWith: "sandbox_" } } });
      const sum = (c: string, scope?: string) =>
        rows.filter((r) => r.counter === c && (!scope || r.scopeId === scope)).reduce((n, r) => n + r.count, 0);
      return {
        reservations: rows.filter((r) => r.counter === "sandbox_reservation").length,
        reserved: sum("sandbox_reserved_seconds"),
        open: sum("sandbox_open_workspaces", changeId),
        used: sum("sandbox_used_seconds"),
      };
    };
    const { changeId } = await createChange(
      t.db,
      {
        tenantId: "ten_a",
        projectId,
        clientRequestId: "crash",
        createdBy: { kind: "user", id: "u" },
        input: change([{ key: "a", title: "A", dependsOn: [], intents: { paths: [], prefixes: [] } }]),
      },
      w.deps,
    );
    const task = await t.db.task.findFirstOrThrow({ where: { changeId } });
    // The first attempt admitted its workspace and reserved, then its runner died.
    const runId = `run_${randomUUID()}`;
    await admitSandbox(t.db, { changeId, projectId }, w.config);
    await reserveSandboxSeconds(t.db, { kind: "agent", changeId, id: `sbxres_${runId}` }, w.config, new Date());
    const before = await counters(changeId);
    expect(before).toMatchObject({ reservations: 1, reserved: 300, open: 1 });
    const { result } = await runTaskDirectly(w, task, {}, runId);
    expect(result.outcome).toBe("completed");
    const after = await counters(changeId);
    expect(after).toMatchObject({ reservations: 0, reserved: 0, open: 0 });

    // A run that ended without settling (its runner crashed before the settle): the sweep settles it.
    const orphan = `run_${randomUUID()}`;
    await t.db.agentRun.create({
      data: {
        id: orphan,
        taskId: task.id,
        changeId,
        agentId: "agt_x",
        wakeCommandId: `cmd_${orphan}`,
        reason: "dispatch",
        status: "failed",
      },
    });
    await admitSandbox(t.db, { changeId, projectId }, w.config);
    await reserveSandboxSeconds(t.db, { kind: "agent", changeId, id: `sbxres_${orphan}` }, w.config, new Date());
    expect(await sweepSandboxReservations(t.db, w.config)).toBe(1);
    expect(await sweepSandboxReservations(t.db, w.config)).toBe(0);
    const swept = await counters(changeId);
    expect(swept).toMatchObject({ reservations: 0, reserved: 0, open: 0 });
    // Its whole reservation as measured seconds: the local Sandbox has no idle tail.
    expect(swept.used).toBe(after.used + 300);
  });
});

describe("provisioning", () => {
  it("creates the canonical repository from the template with S0, its code store and project.created", async () => {
    const w = await world();
    const projectId = await newProject(w);
    expect(await t.db.project.findUniqueOrThrow({ where: { id: projectId } })).toMatchObject({
      status: "active",
      canonicalGeneration: 0,
    });
    const s0 = await t.db.canonicalGeneration.findUniqueOrThrow({
      where: { projectId_generation: { projectId, generation: 0 } },
    });
    const index = await w.blobs.get(sourceKeys.index(projectId, s0.tree));
    const files = (JSON.parse(new TextDecoder().decode(index?.body)) as { files: { path: string }[] }).files.map(
      (f) => f.path,
    );
    expect(files).toEqual(
      expect.arrayContaining(["package.json", "src/cart.ts", "test/cart.invariant.test.ts", "public/index.html"]),
    );
    expect(await t.db.outboxRow.count({ where: { projectId, eventType: "project.created" } })).toBe(1);
    // A redelivery of the same command changes nothing.
    await withTransaction(t.db, (ctx) =>
      enqueueCommand(
        ctx,
        { commandId: `cmd_provision_again_${projectId}`, commandType: "project.provision", projectId, payload: {} },
        w.deps,
      ),
    );
    await consumeQueue(t.db, "integration", [provisionHandler(w.deps)], { ...w.deps, owner: "t" });
    expect(await t.db.outboxRow.count({ where: { projectId, eventType: "project.created" } })).toBe(1);
  });

  it("serves the canonical source over git smart HTTP to a read token only", async () => {
    const w = await world();
    const projectId = await newProject(w);
    const server = await startGitHttpServer({
      port: 0,
      repoRoot: w.root,
      authorize: (repo, token) => checkRepoToken(t.db, token, repo, "read", new Date()),
    });
    try {
      const token = (
        await issueRepoToken(t.db, { repo: projectId, mode: "read", purpose: "clone" }, w.config, new Date())
      ).token;
      const home = mkdtempSync(join(tmpdir(), "rh-home-"));
      const env = { PATH: process.env.PATH ?? "", HOME: home, GIT_TERMINAL_PROMPT: "0", GIT_CONFIG_NOSYSTEM: "1" };
      const into = join(home, "clone");
      // Async: the server answers from this same process, so a blocking spawn would deadlock.
      const ok = await git(["clone", `http://x:${token}@127.0.0.1:${server.port}/git/${projectId}.git`, into], env);
      expect(ok.code, ok.stderr).toBe(0);
      expect(readFileSync(join(into, "src/cart.ts"), "utf8")).toContain("export");
      const anon = await git(
        ["clone", `http://127.0.0.1:${server.port}/git/${projectId}.git`, join(home, "anon")],
        env,
      );
      expect(anon.code).not.toBe(0);
    } finally {
      await server.close();
    }
  });
});

describe("agent runs", () => {
  it("runs a -> b end to end: fork, stacked merge, tool loop in the Sandbox, push, ChangeSet with its patch, completion", async () => {
    const w = await world();
    const projectId = await newProject(w);
    await startWorker(w);
    const { changeId } = await createChange(
      t.db,
      {
        tenantId: "ten_a",
        projectId,
        clientRequestId: "banner",
        createdBy: { kind: "user", id: "usr" },
        input: change([
          {
            key: "a",
            title: "Banner text",
            dependsOn: [],
            intents: { paths: ["src/banner.ts"], prefixes: [] },
            editPlan: [
              { op: "write", path: "src/banner.ts", content: 'export const banner = "Hello";\n' },
              { op: "run", argv: ["node", "-e", "require('fs').writeFileSync('ran.txt', process.version)"] },
            ],
          },
          {
            key: "b",
            title: "Louder banner",
            dependsOn: ["a"],
            intents: { paths: ["src/banner.ts"], prefixes: [] },
            editPlan: [{ op: "replace", path: "src/banner.ts", find: '"Hello"', replace: '"HELLO!"' }],
          },
        ]),
      },
      w.deps,
    );
    await until(
      "both tasks completed",
      () => t.db.task.findMany({ where: { changeId } }),
      (ts) => ts.every((x) => x.state === "completed"),
    ).catch(async (err) => {
      console.error(JSON.stringify(await t.db.agentRun.findMany({ where: { changeId } })));
      console.error(
        JSON.stringify(w.logs.lines.map((l) => [l.function, l.trigger, l.outcome, l.msg, l.error]).slice(-40)),
      );
      throw err;
    });
    const sets = await t.db.changeSet.findMany({ where: { changeId }, orderBy: { createdAt: "asc" } });
    expect(sets).toHaveLength(2);
    const [a, b] = sets as [(typeof sets)[number], (typeof sets)[number]];
    expect(a.paths).toEqual(["ran.txt", "src/banner.ts"]);
    expect(b.paths).toEqual(["src/banner.ts"]);
    expect(b.baseCommit).not.toBe(a.baseCommit);
    const patchB = new TextDecoder().decode((await w.blobs.get(b.patchRef as string))?.body);
    expect(patchB).toContain('-export const banner = "Hello";\n+export const banner = "HELLO!";');
    expect(b.patchRef).toBe(sourceKeys.changesetPatch(projectId, b.id));
    for (const cs of sets) expect(existsSync(join(w.root, cs.fork))).toBe(true);
    expect(await t.db.outboxRow.count({ where: { projectId, eventType: "changeset.published" } })).toBe(2);
    await until(
      "verification.started",
      () => t.db.outboxRow.count({ where: { projectId, eventType: "verification.started" } }),
      (n) => n === 1,
    );
    // The composition takes both ChangeSets in Work Graph order on S0; a repeat finds the same Candidate.
    const candidate = await until(
      "the Candidate",
      () => t.db.candidate.findFirst({ where: { changeId } }),
      (c) => c !== null,
    );
    expect(candidate?.changeSetIds).toEqual([a.id, b.id]);
    // The worker verifies it on its own: fork, merge, the template's build and targeted tests, the gate.
    const verified = await until(
      "the Candidate verified",
      () => t.db.candidate.findUniqueOrThrow({ where: { id: candidate?.id ?? "" }, include: { evidence: true } }),
      (c) => c.status !== "created" && c.status !== "verifying",
      120_000,
    );
    expect(verified.status, JSON.stringify(verified.evidence)).toBe("verified");
    expect(verified.evidence.map((e) => e.checkId).sort()).toEqual(["build", "targeted"]);
    // The meter was settled: nothing reserved, nothing open, and each workspace (two runs, one
    // verification) charged the seconds it ran: the local Sandbox is measured, with no idle tail.
    const counters = await t.db.usageCounter.findMany({ where: { counter: { startsWith: "sandbox_" } } });
    const count = (c: string, scope?: string) =>
      counters.filter((x) => x.counter === c && (!scope || x.scopeId === scope)).reduce((n, x) => n + x.count, 0);
    expect(count("sandbox_reserved_seconds")).toBe(0);
    expect(count("sandbox_open_workspaces", changeId)).toBe(0);
    const charges = await t.db.sandboxCharge.findMany({ where: { changeId } });
    expect(charges.map((c) => c.kind).sort()).toEqual(["agent", "agent", "candidate"]);
    for (const c of charges) {
      expect(c).toMatchObject({ billing: "measured", chargedSeconds: c.wallSeconds, settledAt: expect.any(Date) });
    }
    const charged = charges.reduce((n, c) => n + (c.chargedSeconds ?? 0), 0);
    expect(charged).toBeGreaterThan(0);
    expect(count("sandbox_used_seconds")).toBeGreaterThanOrEqual(charged);
    // Run directories are removed after the run.
    expect(
      existsSync(
        join(
          w.dir,
          "sandboxes",
          `proj-${projectId.slice(5)}`,
          (await t.db.agentRun.findFirstOrThrow({ where: { changeId } })).id,
        ),
      ),
    ).toBe(false);
  }, 200_000);

  it("fails the run instead of publishing partial work when the Sandbox is lost", async () => {
    const w = await world();
    const projectId = await newProject(w);
    const {
      changeId,
      task,
      runId,
      result: r,
    } = await runOneTask(w, projectId, "lost", [{ op: "write", path: "x.txt", content: "x\n" }], {
      afterTools: async (path) => rmSync(path, { recursive: true, force: true }),
    });
    expect(r.outcome).toBe("failed");
    expect(r.detail).toMatch(/Sandbox was lost/);
    expect(await t.db.changeSet.count({ where: { changeId } })).toBe(0);
    expect(await t.db.task.findUniqueOrThrow({ where: { id: task.id } })).toMatchObject({ state: "failed" });
    // The fork keeps its base: nothing partial was pushed.
    const fork = workspaceFork(runId);
    const rt = (await issueRepoToken(t.db, { repo: fork, mode: "read", purpose: "t" }, w.config, new Date())).token;
    const canon = (await issueRepoToken(t.db, { repo: projectId, mode: "read", purpose: "t" }, w.config, new Date()))
      .token;
    expect(await w.store.head(fork, rt)).toBe(await w.store.head(projectId, canon));
  });

  it("retries a Task by itself when its run fails before the Agent starts, up to startRetriesPerTask", async () => {
    const w = await world(loadConfig("dev", { causal: { startRetriesPerTask: 1 } }));
    const projectId = await newProject(w);
    // The fork fails (a full disk, say): this system's own step, before the Agent did anything.
    const failing = Object.assign(Object.create(w.store) as SourceStore, {
      fork: () => Promise.reject(new Error("ENOSPC: no space left on device")),
    });
    const first = await runOneTask(w, projectId, "start-fails", [{ op: "write", path: "x.txt", content: "x\n" }], {
      source: failing,
    });
    expect(first.result).toMatchObject({ outcome: "failed" });
    expect(first.result.detail).toMatch(/^the run could not start: ENOSPC.*\(the Task is retried by itself\)$/);
    expect(await t.db.task.findUniqueOrThrow({ where: { id: first.task.id } })).toMatchObject({
      state: "pending",
      attempt: 2,
    });
    const retried = await t.db.outboxRow.findMany({ where: { projectId, eventType: "task.retried" } });
    expect(retried.map((r) => (r.envelope as { actor: unknown }).actor)).toEqual([
      { kind: "system", id: "agent-runner" },
    ]);
    // The second start fails too: past the limit, the Task stays failed for a person to retry.
    const second = await runTaskDirectly(w, first.task, { source: failing });
    expect(second.result.detail).not.toMatch(/retried by itself/);
    expect(await t.db.task.findUniqueOrThrow({ where: { id: first.task.id } })).toMatchObject({
      state: "failed",
      attempt: 2,
    });
    // With the fork working again, a person's retry runs to completion.
    await retryTask(t.db, { tenantId: "ten_a", taskId: first.task.id, actorId: "u" }, w.deps);
    const third = await runTaskDirectly(w, first.task);
    expect(third.result.outcome).toBe("completed");
    const runs = await t.db.agentRun.findMany({ where: { taskId: first.task.id }, orderBy: { createdAt: "asc" } });
    expect(runs.map((r) => [r.status, r.error?.slice(0, 24) ?? null])).toEqual([
      ["failed", "the run could not start:"],
      ["failed", "the run could not start:"],
      ["completed", null],
    ]);
  });

  it("blocks the Task with sandbox_meter when the monthly meter would pass its cap", async () => {
    const w = await world(loadConfig("dev", { sandbox: { monthlySeconds: 299 } }));
    const projectId = await newProject(w);
    const { changeId, task, result: r } = await runOneTask(w, projectId, "meter", undefined);
    expect(r.outcome).toBe("blocked");
    expect(await t.db.task.findUniqueOrThrow({ where: { id: task.id } })).toMatchObject({
      state: "blocked",
      blockedLimit: "sandbox_meter",
      // The budget refused it (not the open-workspace limit): it resumes by itself once there is room.
      blockedCause: "sandbox_monthly_seconds",
    });
    expect(r.detail).toMatch(/resumes by itself once the budget is raised or the month turns/);
    expect(await t.db.outboxRow.count({ where: { projectId, eventType: "task.blocked" } })).toBe(1);
    expect(
      await t.db.usageCounter.findFirst({ where: { counter: "sandbox_open_workspaces", scopeId: changeId } }),
    ).toMatchObject({ count: 0 });
  });
});

describe("the project's command allowlist", () => {
  it("narrows what run_command may start: a command off the project's list fails the run", async () => {
    const w = await world();
    const projectId = await newProject(w);
    await t.db.project.update({ where: { id: projectId }, data: { commandAllowlist: ["ls"] } });
    const { changeId, result: r } = await runOneTask(w, projectId, "allow", [
      { op: "run", argv: ["node", "--version"] },
    ]);
    expect(r.outcome).toBe("failed");
    expect(r.detail).toMatch(/"node" is not on the allowlist \(ls\)/);
    expect(await t.db.changeSet.count({ where: { changeId } })).toBe(0);
  });
});

/** Past the dev retention (7 days) on the real clock. */
const eightDaysAgo = () => new Date(Date.now() - 8 * 86_400_000);

describe("cleanup and sweeps", () => {
  it("the sweep pages through hundreds of old forks, and keeps what a recomposition or a sync still needs", async () => {
    const w = await world();
    const p = await newProject(w);
    const old = eightDaysAgo();
    const change = async (status: "promoted" | "open") => {
      const id = `chg_${randomUUID()}`;
      await t.db.change.create({
        data: { id, projectId: p, title: "t", riskTier: "low", clientRequestId: id, status },
      });
      await t.db.task.create({ data: { id: `task_${id}`, changeId: id, key: "a", title: "a", state: "completed" } });
      return id;
    };
    const done = await change("promoted");
    const open = await change("open");
    const runIds = new Map<string, string>();
    const run = (changeId: string, i: number) => ({
      id: runIds.set(`${changeId}:${i}`, `run_${randomUUID()}`).get(`${changeId}:${i}`) as string,
      taskId: `task_${changeId}`,
      changeId,
      agentId: "x",
      wakeCommandId: `cmd_${changeId}_${i}`,
      reason: "dispatch",
      status: "completed",
      fork: "ws",
      createdAt: old,
    });
    // 260 runs of a promoted Change (many sharing one instant, so order must break ties), 5 of an open one.
    await t.db.agentRun.createMany({ data: Array.from({ length: 260 }, (_, i) => run(done, i)) });
    await t.db.agentRun.createMany({ data: Array.from({ length: 5 }, (_, i) => run(open, i)) });
    const candidate = (i: number, status: string, promotedGeneration: number | null = null) => ({
      id: `cand_${String(i).padStart(8, "0")}`,
      projectId: p,
      changeId: done,
      compositionKey: `sweep-${i}`,
      baseGeneration: 0,
      baseCommit: "c",
      status,
      promotedGeneration,
      createdAt: old,
    });
    // 120 rejected or stale Candidates; one promoted at generation 0 (main is there), one at
    // generation 1, which main has not reached (its sync still needs the fork), one still verifying.
    await t.db.candidate.createMany({
      data: [
        ...Array.from({ length: 120 }, (_, i) => candidate(i, i % 2 ? "rejected" : "stale")),
        candidate(900, "promoted", 0),
        candidate(901, "promoted", 1),
        candidate(902, "verifying"),
      ],
    });
    const s0 = await t.db.canonicalGeneration.findFirstOrThrow({ where: { projectId: p, generation: 0 } });
    await t.db.canonicalGeneration.create({
      data: { projectId: p, generation: 1, commit: "f".repeat(40), tree: "t", candidateId: "cand_00000901" },
    });
    // Real forks for a few, to see them go from disk.
    const read = (await issueRepoToken(t.db, { repo: p, mode: "read", purpose: "t" }, w.config, new Date())).token;
    const lastRun = runIds.get(`${done}:259`) as string;
    for (const id of [lastRun, "cand_00000119"]) {
      await w.store.fork(p, read, id.startsWith("run_") ? workspaceFork(id) : candidateFork(id));
    }

    // Today's clock: repository tokens are checked on the real one.
    const sweepDeps = w.deps;
    await withTransaction(t.db, (ctx) =>
      enqueueCommand(
        ctx,
        { commandId: "cmd_sweep_page", commandType: "forks.sweep", projectId: p, payload: {} },
        sweepDeps,
      ),
    );
    // Each delivery sweeps one page and asks for another ("more"); past the integration queue's
    // deliveries per command the rest is deferred and sent again later (requeueDeferred, as the
    // maintenance tick does), until nothing is left.
    let deliveries = 0;
    for (;;) {
      if ((await t.db.queueMessage.count({ where: { commandId: "cmd_sweep_page" } })) === 0) {
        if ((await requeueDeferred(t.db, sweepDeps)) === 0) break;
      }
      await consumeQueue(t.db, "integration", [forksSweepHandler(sweepDeps)], { ...sweepDeps, owner: "t" });
      if (++deliveries > 20) throw new Error("the sweep did not finish in 20 deliveries");
    }
    // At most SWEEP_BATCH of each kind per delivery: 260 runs need at least ceil(260 / 50) deliveries.
    expect(await t.db.queueMessage.count({ where: { commandId: "cmd_sweep_page" } })).toBe(0);
    expect(await t.db.agentRun.count({ where: { changeId: done, forkDeletedAt: null } })).toBe(0);
    expect(await t.db.agentRun.count({ where: { changeId: open, forkDeletedAt: { not: null } } })).toBe(0);
    const kept = await t.db.candidate.findMany({ where: { projectId: p, forkDeletedAt: null }, select: { id: true } });
    expect(kept.map((c) => c.id).sort()).toEqual(["cand_00000901", "cand_00000902"]);
    expect(existsSync(join(w.root, workspaceFork(lastRun)))).toBe(false);
    expect(existsSync(join(w.root, candidateFork("cand_00000119")))).toBe(false);
    expect(s0.commit).toHaveLength(40);
  });

  it("cleanup deletes only the names one project's rows derive; the sweep deletes old forks only", async () => {
    const w = await world();
    const p1 = await newProject(w);
    const p2 = await newProject(w);
    // One finished run per project, each with its fork, of a Change that is over.
    for (const p of [p1, p2]) {
      const ch = `chg_${randomUUID()}`;
      await t.db.change.create({
        data: { id: ch, projectId: p, title: "t", riskTier: "low", clientRequestId: ch, status: "cancelled" },
      });
      await t.db.task.create({ data: { id: `task_${ch}`, changeId: ch, key: "a", title: "a", state: "completed" } });
      const runId = `run_${randomUUID()}`;
      await t.db.agentRun.create({
        data: {
          id: runId,
          taskId: `task_${ch}`,
          changeId: ch,
          agentId: "x",
          wakeCommandId: `cmd_${runId}`,
          reason: "dispatch",
          status: "completed",
          fork: workspaceFork(runId),
          createdAt: eightDaysAgo(),
        },
      });
      const read = (await issueRepoToken(t.db, { repo: p, mode: "read", purpose: "t" }, w.config, new Date())).token;
      await w.store.fork(p, read, workspaceFork(runId));
    }
    const forkOf = async (p: string) =>
      workspaceFork((await t.db.agentRun.findFirstOrThrow({ where: { change: { projectId: p } } })).id);
    const f1 = await forkOf(p1);
    const f2 = await forkOf(p2);
    // A rejected Candidate per project, each with its fork.
    const candFork: Record<string, string> = {};
    for (const p of [p1, p2]) {
      const ch = (await t.db.change.findFirstOrThrow({ where: { projectId: p } })).id;
      const id = `cand_${randomUUID().replace(/-/g, "")}`;
      await t.db.candidate.create({
        data: {
          id,
          projectId: p,
          changeId: ch,
          compositionKey: id,
          baseGeneration: 0,
          baseCommit: "c",
          status: "rejected",
          createdAt: eightDaysAgo(),
        },
      });
      const read = (await issueRepoToken(t.db, { repo: p, mode: "read", purpose: "t" }, w.config, new Date())).token;
      candFork[p] = candidateFork(id);
      await w.store.fork(p, read, candidateFork(id));
    }

    // The sweep (per project) removes the 8-day-old fork of p1 only (retention: 7 days), and marks it.
    const sweepDeps = w.deps;
    await withTransaction(t.db, (ctx) =>
      enqueueCommand(
        ctx,
        { commandId: "cmd_sweep_p1", commandType: "forks.sweep", projectId: p1, payload: {} },
        sweepDeps,
      ),
    );
    await consumeQueue(t.db, "integration", [forksSweepHandler(sweepDeps)], { ...sweepDeps, owner: "t" });
    expect(existsSync(join(w.root, f1))).toBe(false);
    expect(existsSync(join(w.root, f2))).toBe(true);
    expect(existsSync(join(w.root, candFork[p1] as string))).toBe(false);
    expect(existsSync(join(w.root, candFork[p2] as string))).toBe(true);
    expect(await t.db.agentRun.count({ where: { change: { projectId: p1 }, forkDeletedAt: { not: null } } })).toBe(1);

    await withTransaction(t.db, (ctx) =>
      enqueueCommand(
        ctx,
        { commandId: "cmd_cleanup_p1", commandType: "project.cleanup", projectId: p1, payload: {} },
        w.deps,
      ),
    );
    await consumeQueue(t.db, "integration", [cleanupHandler(w.deps)], { ...w.deps, owner: "t" });
    expect(existsSync(join(w.root, p1))).toBe(false);
    expect(await w.blobs.list(`source/${p1}/`)).toEqual([]);
    // The other project is untouched.
    expect(existsSync(join(w.root, p2))).toBe(true);
    expect(existsSync(join(w.root, f2))).toBe(true);
    expect((await w.blobs.list(`source/${p2}/`)).length).toBeGreaterThan(0);
  });
});
