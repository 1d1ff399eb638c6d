import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import {
  type AgentProvider,
  canonicalRepo,
  DEFAULT_COMMAND_ALLOWLIST,
  type Sandbox,
  scriptedProvider,
  workspaceFork,
} from "@rhumbatron/core";
import { claimNextRun, type Db, issueRepoToken } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { doneWorking } from "@rhumbatron/runtime";
import git from "isomorphic-git";
import { describe, expect, it } from "vitest";
import { MAIN, type SourceStore } from "../source/store.ts";
import { createScriptedChange, provisionedProject, runTaskDirectly, type TestWorld, testWorld } from "../test-world.ts";
import { deferred } from "../testing.ts";
import { executeRun } from "./runner.ts";

/**
 * Sandbox loss (runner.ts, prepareStep): a run whose runner is gone with its Sandbox is taken again
 * by another runner (claimNextRun), which checks out the start commit the first attempt recorded
 * (agent_runs.start_commit), not canonical's main by then; the Agent does its work again and one
 * ChangeSet is published. `npm run chaos` reaches this path by killing workers; here the loss is
 * made by hand, at a moment the test waits for.
 */
const t = useTestDatabase();
const PATH = "src/restored.txt";
const CONTENT = "written by the Agent\n";
/** Written only by a lost attempt: the restored attempt's ChangeSet must not hold it. */
const LOST_PATH = "src/lost-attempt.txt";
/** A file of the project template (tracked at the start commit) that only a lost attempt changes. */
const TRACKED_PATH = "README.md";

/** A Sandbox whose workspaces' paths the test learns (the run directory of each open). */
function watchedSandbox(sandbox: Sandbox, opened: string[]): Sandbox {
  return Object.assign(Object.create(sandbox) as Sandbox, {
    open: async (dir: Parameters<Sandbox["open"]>[0]) => {
      const ws = await sandbox.open(dir);
      opened.push(ws.path);
      return ws;
    },
  });
}

/**
 * The database as a runner on a lost host sees it: once `gone`, nothing it asks is answered (its
 * process is no more), so the lost attempt can neither finish the run nor touch it again.
 */
function lostWith<T extends object>(target: T, host: { gone: boolean }): T {
  return new Proxy(target, {
    get(obj, key) {
      const value = Reflect.get(obj, key, obj) as unknown;
      if (typeof value === "function") {
        return (...args: unknown[]) => (host.gone ? new Promise(() => {}) : Reflect.apply(value, obj, args));
      }
      return value !== null && typeof value === "object" ? lostWith(value, host) : value;
    },
  });
}

/**
 * A Change lands on canonical (as a promotion moves its main) while the run is lost: a file added on
 * top of main. Returns the new main.
 */
async function landOnCanonical(w: TestWorld, projectId: string): Promise<string> {
  const gitdir = w.store.gitdir(canonicalRepo(projectId));
  const main = await git.resolveRef({ fs, gitdir, ref: MAIN });
  const { commit } = await git.readCommit({ fs, gitdir, oid: main });
  const { tree } = await git.readTree({ fs, gitdir, oid: commit.tree });
  const oid = await git.writeBlob({ fs, gitdir, blob: new TextEncoder().encode("landed meanwhile\n") });
  const next = await git.commit({
    fs,
    gitdir,
    message: "Another Change, promoted while the run was lost\n",
    author: { name: "Test", email: "test@localhost" },
    tree: await git.writeTree({
      fs,
      gitdir,
      tree: [...tree, { mode: "100644", path: "LANDED.md", oid, type: "blob" }],
    }),
    parent: [main],
    noUpdateBranch: true,
  });
  await git.writeRef({ fs, gitdir, ref: MAIN, value: next, force: true });
  return next;
}

async function readToken(w: TestWorld, repo: string) {
  return (await issueRepoToken(t.db, { repo, mode: "read", purpose: "test" }, w.config, new Date())).token;
}

/** The paths of a working copy that differ from its HEAD commit (changed, added or deleted, staged or not). */
async function dirtyPaths(dir: string): Promise<string[]> {
  const matrix = await git.statusMatrix({ fs, dir });
  return matrix.filter(([, h, wd, s]) => !(h === 1 && wd === 1 && s === 1)).map(([p]) => p);
}

/**
 * Another runner takes the lost run once the lost one has left it alone past its reservation and
 * idle tail, and executes it. Its Agent notes what it finds in the run directory before it does
 * anything, then does the Task's planned work (never anything a lost attempt did beyond it).
 */
async function takeOver(w: TestWorld, runId: string) {
  const staleAfterMs = (w.config.sandbox.agentReservationSeconds + w.config.sandbox.agentIdleTailSeconds) * 1000;
  const claimed = await claimNextRun(t.db, {
    now: new Date(Date.now() + staleAfterMs + 1000),
    runner: "wkr_recovering",
    staleAfterMs,
    takeoverSeconds: w.config.worker.takeoverSeconds,
  });
  expect(claimed).toBe(runId);
  const opened: string[] = [];
  const found: { head: string; dirty: string[] }[] = [];
  const restoredAgent: AgentProvider = {
    name: "scripted, looking at the workspace it starts in",
    async run(agentTask, tools, signal, inbox) {
      const dir = opened[0] ?? "";
      found.push({ head: await git.resolveRef({ fs, dir, ref: "HEAD" }), dirty: await dirtyPaths(dir) });
      return scriptedProvider.run(agentTask, tools, signal, inbox);
    },
  };
  try {
    const result = await executeRun(
      {
        ...w.deps,
        sandbox: watchedSandbox(w.sandbox, opened),
        provider: restoredAgent,
        allowlist: [...DEFAULT_COMMAND_ALLOWLIST],
      },
      runId,
    );
    return { result, opened, found };
  } finally {
    doneWorking("wkr_recovering", "agent_run", [runId], new Date());
  }
}

describe("Sandbox loss", () => {
  it("restores a run lost with its Sandbox from its recorded start commit; the Agent's work re-applies and is published once", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const changeId = await createScriptedChange(w, projectId, {
      requestId: "sandbox-loss",
      title: "Restored after a Sandbox loss",
      tasks: [{ key: "a", paths: [PATH], editPlan: [{ op: "write", path: PATH, content: CONTENT }] }],
    });
    const task = await t.db.task.findFirstOrThrow({ where: { changeId } });
    const runId = "run_5a1d0000-0000-4000-8000-00000000105e";

    // The first runner: its Agent makes the edit in the Sandbox and is still at work when the host goes.
    const host = { gone: false };
    const firstOpened: string[] = [];
    const working = deferred();
    const stillWorking: AgentProvider = {
      name: "scripted, still working when its host is lost",
      async run(agentTask, tools, signal, inbox) {
        await scriptedProvider.run(agentTask, tools, signal, inbox);
        working.resolve();
        return new Promise(() => {});
      },
    };
    const first = runTaskDirectly(
      w,
      task,
      { db: lostWith(t.db, host) as Db, sandbox: watchedSandbox(w.sandbox, firstOpened), provider: stillWorking },
      runId,
    );
    await Promise.race([
      working.promise,
      first.then(({ result }) => {
        throw new Error(`the first attempt ended before its Agent worked: ${JSON.stringify(result)}`);
      }),
    ]);
    const { startCommit: recorded, fork } = await t.db.agentRun.findUniqueOrThrow({ where: { id: runId } });
    expect(fork).toBe(workspaceFork(runId));
    if (!recorded) throw new Error("the run recorded no start commit before its Agent started");
    // Sanity: the start is canonical's main when the run began, and the Agent's edit is in the workspace.
    expect(recorded).toBe(await w.store.head(canonicalRepo(projectId), await readToken(w, canonicalRepo(projectId))));
    const [workspace] = firstOpened;
    if (!workspace) throw new Error("the first attempt opened no workspace");
    expect(readFileSync(join(workspace, PATH), "utf8")).toBe(CONTENT);

    // The Sandbox is lost with its runner: the workspace directory vanishes, the runner answers no more.
    host.gone = true;
    rmSync(workspace, { recursive: true, force: true });
    expect(existsSync(workspace)).toBe(false);

    // Work goes on meanwhile: canonical moves on. The restored run must not start from there.
    const landed = await landOnCanonical(w, projectId);
    expect(landed).not.toBe(recorded);

    // Another runner takes the run once the lost one has left it alone past its reservation and idle tail.
    const staleAfterMs = (w.config.sandbox.agentReservationSeconds + w.config.sandbox.agentIdleTailSeconds) * 1000;
    const claim = (at: Date) =>
      claimNextRun(t.db, {
        now: at,
        runner: "wkr_recovering",
        staleAfterMs,
        takeoverSeconds: w.config.worker.takeoverSeconds,
      });
    const later = new Date(Date.now() + staleAfterMs + 1000);
    expect(await claim(later)).toBe(runId);

    // The restored attempt: what its Agent finds before it does anything is exactly the recorded start.
    const restoredOpened: string[] = [];
    const found: { head: string; edited: boolean; dirty: string[] }[] = [];
    const restoredAgent: AgentProvider = {
      name: "scripted, looking at the workspace it starts in",
      async run(agentTask, tools, signal, inbox) {
        const dir = restoredOpened[0] ?? "";
        const matrix = await git.statusMatrix({ fs, dir });
        found.push({
          head: await git.resolveRef({ fs, dir, ref: "HEAD" }),
          edited: existsSync(join(dir, PATH)),
          dirty: matrix.filter(([, h, wd, s]) => !(h === 1 && wd === 1 && s === 1)).map(([p]) => p),
        });
        return scriptedProvider.run(agentTask, tools, signal, inbox);
      },
    };
    let result: Awaited<ReturnType<typeof executeRun>>;
    try {
      result = await executeRun(
        {
          ...w.deps,
          sandbox: watchedSandbox(w.sandbox, restoredOpened),
          provider: restoredAgent,
          allowlist: [...DEFAULT_COMMAND_ALLOWLIST],
        },
        runId,
      );
    } finally {
      doneWorking("wkr_recovering", "agent_run", [runId], new Date());
    }
    // The same run directory, checked out at the recorded start: not canonical's newer main, nothing of the lost attempt.
    expect(restoredOpened).toEqual([workspace]);
    expect(found, `the restored Agent's start (the run: ${result.outcome}, ${result.detail})`).toEqual([
      { head: recorded, edited: false, dirty: [] },
    ]);
    expect(result).toMatchObject({ outcome: "completed" });

    // Finished: the run keeps its recorded start, the Task is complete, one ChangeSet built on that start.
    expect(await t.db.agentRun.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
      status: "completed",
      startCommit: recorded,
      runnerId: "wkr_recovering",
    });
    expect(await t.db.task.findUniqueOrThrow({ where: { id: task.id } })).toMatchObject({ state: "completed" });
    const sets = await t.db.changeSet.findMany({ where: { changeId } });
    expect(sets).toHaveLength(1);
    const [set] = sets;
    expect(set).toMatchObject({ id: result.changeSetId, runId, baseCommit: recorded, paths: [PATH] });
    const forkToken = await readToken(w, workspaceFork(runId));
    expect(await w.store.head(workspaceFork(runId), forkToken)).toBe(set?.commit);
    expect((await w.store.commitInfo(workspaceFork(runId), forkToken, set?.commit ?? "")).parents).toEqual([recorded]);
    expect(await t.db.outboxRow.count({ where: { projectId, eventType: "changeset.published" } })).toBe(1);
    // Nothing takes the finished run again, and the workspace is gone after it.
    expect(await claim(new Date(later.getTime() + staleAfterMs))).toBeNull();
    expect(existsSync(workspace)).toBe(false);
  });

  it("a runner that outlives its Sandbox fails the run on the next command and publishes none of the lost edits", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const changeId = await createScriptedChange(w, projectId, {
      requestId: "sandbox-loss-live-runner",
      title: "Sandbox lost under a live runner",
      tasks: [
        {
          key: "a",
          paths: [PATH],
          editPlan: [
            { op: "write", path: PATH, content: CONTENT },
            { op: "run", argv: ["node", "-e", "0"] },
          ],
        },
      ],
    });
    const task = await t.db.task.findFirstOrThrow({ where: { changeId } });
    const opened: string[] = [];
    const edited = deferred();
    const lost = deferred();
    // The Agent makes its edit, then waits until the test has removed its workspace before its command.
    const agent: AgentProvider = {
      name: "scripted, its command after the loss",
      async run(agentTask, tools, signal, inbox) {
        const [write, ...rest] = agentTask.editPlan ?? [];
        await scriptedProvider.run({ ...agentTask, editPlan: write ? [write] : [] }, tools, signal, inbox);
        edited.resolve();
        await lost.promise;
        return scriptedProvider.run({ ...agentTask, editPlan: rest }, tools, signal, inbox);
      },
    };
    const running = runTaskDirectly(w, task, { sandbox: watchedSandbox(w.sandbox, opened), provider: agent });
    await Promise.race([
      edited.promise,
      running.then(({ result }) => {
        throw new Error(`the run ended before its Agent edited: ${JSON.stringify(result)}`);
      }),
    ]);
    const [workspace] = opened;
    if (!workspace) throw new Error("the run opened no workspace");
    rmSync(workspace, { recursive: true, force: true });
    lost.resolve();
    const { runId, result } = await running;

    // The Sandbox answered UNAVAILABLE (workspace.ts); the uncommitted edit is gone, so nothing is published.
    expect(result.outcome).toBe("failed");
    expect(result.detail).toMatch(/Sandbox loss/);
    expect(await t.db.changeSet.count({ where: { changeId } })).toBe(0);
    expect(await t.db.outboxRow.count({ where: { projectId, eventType: "changeset.published" } })).toBe(0);
    const { startCommit } = await t.db.agentRun.findUniqueOrThrow({ where: { id: runId } });
    const fork = workspaceFork(runId);
    expect(await w.store.head(fork, await readToken(w, fork))).toBe(startCommit);
  });

  it("restores a run lost after its push and before its ChangeSet: the fork's main goes back to the recorded start and the new attempt's work is published once", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const changeId = await createScriptedChange(w, projectId, {
      requestId: "sandbox-loss-after-push",
      title: "Lost between its push and its ChangeSet",
      tasks: [{ key: "a", paths: [PATH], editPlan: [{ op: "write", path: PATH, content: CONTENT }] }],
    });
    const task = await t.db.task.findFirstOrThrow({ where: { changeId } });
    const runId = `run_${randomUUID()}`;
    const fork = workspaceFork(runId);

    // The lost attempt's Agent writes one file more than the restored one will, so the two attempts'
    // commits differ whatever second they are made in (identical commits would hide the refused push).
    const lostAgent: AgentProvider = {
      name: "scripted, with a file the restored attempt never writes",
      run: (agentTask, tools, signal, inbox) =>
        scriptedProvider.run(
          {
            ...agentTask,
            editPlan: [...(agentTask.editPlan ?? []), { op: "write", path: LOST_PATH, content: "lost\n" }],
          },
          tools,
          signal,
          inbox,
        ),
    };
    // The host goes the moment its push returns: the fork's main holds the lost attempt's commit,
    // and no ChangeSet records it.
    const host = { gone: false };
    const opened: string[] = [];
    const pushed = deferred<string>();
    const source = Object.assign(Object.create(w.store) as SourceStore, {
      push: async (...args: Parameters<SourceStore["push"]>) => {
        const commit = await w.store.push(...args);
        host.gone = true;
        pushed.resolve(commit);
        return commit;
      },
    });
    const first = runTaskDirectly(
      w,
      task,
      { db: lostWith(t.db, host) as Db, source, sandbox: watchedSandbox(w.sandbox, opened), provider: lostAgent },
      runId,
    );
    const lostCommit = await Promise.race([
      pushed.promise,
      first.then(({ result }): never => {
        throw new Error(`the first attempt ended before its push: ${JSON.stringify(result)}`);
      }),
    ]);
    const { startCommit: recorded } = await t.db.agentRun.findUniqueOrThrow({ where: { id: runId } });
    if (!recorded) throw new Error("the run recorded no start commit before its Agent started");
    // Sanity: the lost attempt's commit is the fork's main, on the recorded start, and nothing records it.
    const forkToken = await readToken(w, fork);
    expect(await w.store.head(fork, forkToken)).toBe(lostCommit);
    expect((await w.store.commitInfo(fork, forkToken, lostCommit)).parents).toEqual([recorded]);
    expect(await t.db.changeSet.count({ where: { runId } })).toBe(0);

    // The Sandbox is lost with its runner.
    const [workspace] = opened;
    if (!workspace) throw new Error("the first attempt opened no workspace");
    rmSync(workspace, { recursive: true, force: true });

    const { result, found } = await takeOver(w, runId);
    expect(result, `the restored run: ${result.detail}`).toMatchObject({ outcome: "completed" });
    expect(found).toEqual([{ head: recorded, dirty: [] }]);

    // One ChangeSet, its commit on the recorded start, with only the restored attempt's work; the
    // lost attempt's commit is no longer on the fork's main.
    const sets = await t.db.changeSet.findMany({ where: { changeId } });
    expect(sets).toHaveLength(1);
    const [set] = sets;
    if (!set) throw new Error("no ChangeSet");
    expect(set).toMatchObject({ id: result.changeSetId, runId, baseCommit: recorded, paths: [PATH] });
    expect(set.commit).not.toBe(lostCommit);
    const after = await readToken(w, fork);
    expect(await w.store.head(fork, after)).toBe(set.commit);
    expect((await w.store.commitInfo(fork, after, set.commit)).parents).toEqual([recorded]);
    expect(await t.db.outboxRow.count({ where: { projectId, eventType: "changeset.published" } })).toBe(1);
  });

  it("restores a run whose run directory outlived its runner: nothing the lost attempt left there is published", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const changeId = await createScriptedChange(w, projectId, {
      requestId: "sandbox-loss-directory-survives",
      title: "Lost with its run directory left behind",
      tasks: [{ key: "a", paths: [PATH], editPlan: [{ op: "write", path: PATH, content: CONTENT }] }],
    });
    const task = await t.db.task.findFirstOrThrow({ where: { changeId } });
    const runId = `run_${randomUUID()}`;

    // The lost attempt's Agent does the planned work, adds a file the restored attempt never writes,
    // changes a tracked file, and is still at work (nothing committed) when its host goes.
    const host = { gone: false };
    const opened: string[] = [];
    const working = deferred();
    const stillWorking: AgentProvider = {
      name: "scripted, with stray edits, still working when its host is lost",
      async run(agentTask, tools, signal, inbox) {
        const stray = [
          { op: "write" as const, path: LOST_PATH, content: "left behind\n" },
          { op: "write" as const, path: TRACKED_PATH, content: "changed by the lost attempt\n" },
        ];
        await scriptedProvider.run(
          { ...agentTask, editPlan: [...(agentTask.editPlan ?? []), ...stray] },
          tools,
          signal,
          inbox,
        );
        working.resolve();
        return new Promise(() => {});
      },
    };
    const first = runTaskDirectly(
      w,
      task,
      { db: lostWith(t.db, host) as Db, sandbox: watchedSandbox(w.sandbox, opened), provider: stillWorking },
      runId,
    );
    await Promise.race([
      working.promise,
      first.then(({ result }) => {
        throw new Error(`the first attempt ended before its Agent worked: ${JSON.stringify(result)}`);
      }),
    ]);
    const { startCommit: recorded } = await t.db.agentRun.findUniqueOrThrow({ where: { id: runId } });
    if (!recorded) throw new Error("the run recorded no start commit before its Agent started");

    // The runner is killed; its run directory stays, as a killed worker leaves it, with the lost
    // attempt's edits uncommitted in it (sanity: the stray file is untracked, the other one tracked).
    host.gone = true;
    const [workspace] = opened;
    if (!workspace) throw new Error("the first attempt opened no workspace");
    const matrix = await git.statusMatrix({ fs, dir: workspace, filepaths: [LOST_PATH, TRACKED_PATH] });
    expect(matrix.map(([p, h, wd]) => [p, h, wd])).toEqual([
      [TRACKED_PATH, 1, 2],
      [LOST_PATH, 0, 2],
    ]);

    const { result, opened: restoredOpened, found } = await takeOver(w, runId);
    expect(restoredOpened).toEqual([workspace]);
    expect(result, `the restored run: ${result.detail}`).toMatchObject({ outcome: "completed" });

    // The ChangeSet holds the restored attempt's work only: neither the stray file nor the change
    // to the tracked one.
    const sets = await t.db.changeSet.findMany({ where: { changeId } });
    expect(sets).toHaveLength(1);
    expect(sets[0]).toMatchObject({ id: result.changeSetId, runId, baseCommit: recorded, paths: [PATH] });
    expect(await t.db.outboxRow.count({ where: { projectId, eventType: "changeset.published" } })).toBe(1);
    // Because the restored Agent started in a clean checkout of the recorded start.
    expect(found).toEqual([{ head: recorded, dirty: [] }]);
  });
  it("finishes a run lost after its ChangeSet was published with that ChangeSet: the Agent does not run again", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const changeId = await createScriptedChange(w, projectId, {
      requestId: "sandbox-loss-after-changeset",
      title: "Lost between its ChangeSet and its finish",
      tasks: [{ key: "a", paths: [PATH], editPlan: [{ op: "write", path: PATH, content: CONTENT }] }],
    });
    const task = await t.db.task.findFirstOrThrow({ where: { changeId } });
    const runId = `run_${randomUUID()}`;
    // The host goes the moment the transaction that published the ChangeSet commits.
    const host = { gone: false };
    const published = deferred<void>();
    const lost = lostWith(t.db, host) as Db;
    const db = new Proxy(lost, {
      get(obj, key) {
        if (key !== "$transaction") return Reflect.get(obj, key, obj);
        return async (...args: unknown[]) => {
          if (host.gone) return new Promise(() => {});
          const r = await (t.db.$transaction as (...a: unknown[]) => Promise<unknown>)(...args);
          if ((await t.db.changeSet.count({ where: { runId } })) > 0) {
            host.gone = true;
            published.resolve();
          }
          return r;
        };
      },
    });
    const opened: string[] = [];
    const first = runTaskDirectly(w, task, { db, sandbox: watchedSandbox(w.sandbox, opened) }, runId);
    await Promise.race([
      published.promise,
      first.then(({ result }): never => {
        throw new Error(`the first attempt ended before its ChangeSet: ${JSON.stringify(result)}`);
      }),
    ]);
    const [set] = await t.db.changeSet.findMany({ where: { runId } });
    expect((await t.db.agentRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("running");

    const { result, found } = await takeOver(w, runId);
    expect(result, `the restored run: ${result.detail}`).toMatchObject({ outcome: "completed", changeSetId: set?.id });
    // The restored runner's Agent never ran: the published work was the run's result.
    expect(found).toEqual([]);
    expect(await t.db.changeSet.count({ where: { changeId } })).toBe(1);
    expect(await t.db.outboxRow.count({ where: { projectId, eventType: "changeset.published" } })).toBe(1);
    expect(await t.db.task.findUniqueOrThrow({ where: { id: task.id } })).toMatchObject({ state: "completed" });
  });
});
