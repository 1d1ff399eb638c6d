import { loadConfig } from "@rhumbatron/core";
import {
  type CommandHandler,
  consumeQueue,
  doneWorking,
  enqueueCommand,
  recordBeat,
  type WorkerBeat,
} from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { seedChange, seedProjects, useTestDatabase } from "../testing/index.ts";
import { withTransaction } from "../transaction.ts";
import { finishTask } from "./complete-task.ts";
import { retryAfterStartFailure, START_FAILURE } from "./retry-task.ts";
import { claimNextRun, loadRunContext, publishChangeSet } from "./runs.ts";
import { handleWake } from "./wake.ts";
import { receiveWake } from "./woken.ts";

/**
 * An Agent run taken over from a worker counted dead (packages/runtime/src/leases/holders.ts) while
 * that worker still runs it: the superseded execution records nothing, the taker's completes, and
 * the Task ends with one ChangeSet and one completed run of its own. Every step is a call the Agent
 * runner makes (apps/worker/src/agents/runner.ts), with the clock and the beats set by the test.
 */
const t = useTestDatabase();
const config = loadConfig("dev");
const TAKEOVER = config.worker.takeoverSeconds;
const t0 = new Date("2026-07-01T10:00:00Z");
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const deps = { config, nudger: { nudge: async () => {} }, now: () => t0, owner: "wrk_queue" };

const beat = (workerId: string, when: Date, pid = 1000) =>
  recordBeat(t.db, { ...BEAT, workerId, pid } satisfies WorkerBeat, when);
const BEAT = {
  workerId: "",
  executor: "local",
  hostname: "host-a",
  pid: 0,
  version: "0.1.0",
  startedAt: t0,
  sandboxKind: null,
  sandboxIsolates: null,
  sandboxNote: null,
};

/** `runner` claims the next run at `now`, and reads it as executeRun does (its epoch included). */
async function claim(runner: string, now: Date) {
  const runId = await claimNextRun(t.db, { now, runner, staleAfterMs: 3_600_000, takeoverSeconds: TAKEOVER });
  return runId ? { runId, epoch: (await loadRunContext(t.db, runId)).epoch } : null;
}

/** A running Task `tsk_<x>` held by its Agent, with its dispatch run `run_<x>` queued. */
async function seedRunning(x: string) {
  await seedProjects(t.db, [`proj_${x}`]);
  await seedChange(t.db, `proj_${x}`, `chg_${x}`);
  await t.db.task.create({
    data: {
      id: `tsk_${x}`,
      changeId: `chg_${x}`,
      key: "a",
      title: "a",
      state: "running",
      dispatched: true,
      agentId: `agt_${x}`,
    },
  });
  await queueRun(x, `run_${x}`, "dispatch");
}

const queueRun = (x: string, id: string, reason: string) =>
  t.db.agentRun.create({
    data: { id, taskId: `tsk_${x}`, changeId: `chg_${x}`, agentId: `agt_${x}`, wakeCommandId: `cmd_${id}`, reason },
  });

/** What publishStep and run.finish record for a run that completed with commit `commit`. */
async function complete(x: string, held: { runId: string; epoch: number }, commit: string) {
  const changeSetId = `cs_${x}_${commit}`;
  await publishChangeSet(
    t.db,
    {
      runId: held.runId,
      epoch: held.epoch,
      changeId: `chg_${x}`,
      taskId: `tsk_${x}`,
      agentId: `agt_${x}`,
      fork: `ws-${held.runId.slice(4)}`,
      baseCommit: "base",
      commit,
      paths: ["src/a.ts"],
      changeSetId,
      patch: null,
    },
    deps,
  );
  await finishTask(
    t.db,
    {
      taskId: `tsk_${x}`,
      runId: held.runId,
      epoch: held.epoch,
      agentId: `agt_${x}`,
      outcome: "completed",
      changeSetId,
    },
    deps,
  );
}

/** The rows the fault trial's duplicate count reads (scripts/chaos/invariants.ts), for one Task. */
async function results(x: string) {
  const runs = await t.db.agentRun.findMany({ where: { taskId: `tsk_${x}` }, orderBy: { createdAt: "asc" } });
  const changeSets = await t.db.changeSet.findMany({ where: { taskId: `tsk_${x}` } });
  const events = await t.db.outboxRow.findMany({ where: { projectId: `proj_${x}` }, orderBy: { projectSeq: "asc" } });
  return {
    task: (await t.db.task.findUniqueOrThrow({ where: { id: `tsk_${x}` } })).state,
    runs: runs.map((r) => [r.reason, r.status]),
    changeSets: changeSets.map((c) => [c.runId, c.commit]),
    completedBy: events
      .filter((e) => e.eventType === "task.completed")
      .map((e) => (e.envelope as { payload: { runId: string; changeSetId: string } }).payload),
    published: events.filter((e) => e.eventType === "changeset.published").length,
  };
}

const superseded = { code: "CONFLICT", details: { runSuperseded: expect.any(String) } };
/** What a call was refused with; null when it went through. */
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: unknown) => err,
  );

describe("a run taken over while its first runner still works on it", () => {
  it("refuses the superseded execution's ChangeSet and finish; the taker completes the Task once", async () => {
    await seedRunning("f");
    await beat("wrk_a", t0);
    const a = await claim("wrk_a", t0);
    // A's beats stop (a starved event loop, not a death): B counts it dead and takes the run over.
    await beat("wrk_b", at(TAKEOVER + 1), 2000);
    const b = await claim("wrk_b", at(TAKEOVER + 1));
    expect([a?.runId, b?.runId]).toEqual(["run_f", "run_f"]);
    if (!a || !b) throw new Error("unreachable");

    // A wakes up and publishes first, then B; A's finish arrives last.
    const first = await refusal(complete("f", a, "commit_a"));
    await complete("f", b, "commit_b");
    const late = await refusal(
      finishTask(
        t.db,
        { taskId: "tsk_f", runId: "run_f", epoch: a.epoch, agentId: "agt_f", outcome: "failed", reason: "late" },
        deps,
      ),
    );
    expect(await results("f")).toEqual({
      task: "completed",
      runs: [["dispatch", "completed"]],
      changeSets: [["run_f", "commit_b"]],
      completedBy: [{ runId: "run_f", changeSetId: "cs_f_commit_b" }],
      published: 1,
    });
    expect(first).toMatchObject(superseded);
    expect(late).toMatchObject(superseded);
    expect(b.epoch).toBeGreaterThan(a.epoch);
  });

  it("records no second ChangeSet when the taker's start failed and the Task's next attempt runs", async () => {
    await seedRunning("r");
    await beat("wrk_a", t0);
    const a = await claim("wrk_a", t0);
    await beat("wrk_b", at(TAKEOVER + 1), 2000);
    const b = await claim("wrk_b", at(TAKEOVER + 1));
    if (!a || !b) throw new Error("both claims take run_r");
    // B's start fails (its fork, its checkout): the run fails and the Task is retried by itself.
    await finishTask(
      t.db,
      { taskId: "tsk_r", runId: "run_r", epoch: b.epoch, agentId: "agt_r", outcome: "failed", reason: START_FAILURE },
      deps,
    );
    expect(await retryAfterStartFailure(t.db, { taskId: "tsk_r", changeId: "chg_r" }, deps)).toBe(true);
    // Attempt 2 is dispatched to the same Agent (agent.wake, reason dispatch) and claimed by B.
    await t.db.task.update({ where: { id: "tsk_r" }, data: { state: "ready", dispatched: true } });
    await wake("r", "cmd_tsk_r_ready_a2", "dispatch");
    const next = await claim("wrk_b", at(TAKEOVER + 2));
    if (!next) throw new Error("attempt 2's run is queued");
    // A, superseded on attempt 1's run, finishes its work; then attempt 2's run does.
    const refused = await refusal(complete("r", a, "commit_a"));
    await complete("r", next, "commit_next");
    expect(await results("r")).toMatchObject({
      task: "completed",
      runs: [
        ["dispatch", "failed"],
        ["dispatch", "completed"],
      ],
      changeSets: [[next.runId, "commit_next"]],
      completedBy: [{ runId: next.runId, changeSetId: "cs_r_commit_next" }],
      published: 1,
    });
    expect(refused).toMatchObject(superseded);
  });

  it("is never taken by its own runner while it still works on it, stale or not", async () => {
    await seedRunning("s");
    await beat("wrk_s", t0);
    const late = { now: at(5), staleAfterMs: 1000, takeoverSeconds: TAKEOVER };
    try {
      expect(await claimNextRun(t.db, { ...late, now: t0, runner: "wrk_s" })).toBe("run_s");
      // Untouched for longer than staleAfterMs: another worker may take it, its own lanes may not.
      expect(await claimNextRun(t.db, { ...late, runner: "wrk_s" })).toBeNull();
      await beat("wrk_t", at(5), 2000);
      expect(await claimNextRun(t.db, { ...late, runner: "wrk_t" })).toBe("run_s");
    } finally {
      doneWorking("wrk_s", "agent_run", ["run_s"], at(5));
      await t.db.agentRun.update({ where: { id: "run_s" }, data: { status: "cancelled" } });
    }
  });
});

/** An agent.wake for `tsk_<x>`'s Agent, consumed by the wake handler as the worker consumes it. */
async function wake(x: string, commandId: string, reason: string) {
  const handler: CommandHandler = {
    commandTypes: ["agent.wake"],
    handle: async (ctx) => (await handleWake(ctx, deps)).result,
  };
  await withTransaction(t.db, (ctx) =>
    enqueueCommand(
      ctx,
      {
        commandId,
        commandType: "agent.wake",
        projectId: `proj_${x}`,
        changeId: `chg_${x}`,
        taskId: `tsk_${x}`,
        payload: { agentId: `agt_${x}`, reason, causeEventId: `evt_${commandId}`, causeType: "canonical.advanced" },
      },
      deps,
    ),
  );
  await consumeQueue(t.db, "agent-wakeups", [handler], deps);
}

describe("a Task whose runner died while other Changes landed (the scale trial's kill)", () => {
  it("completes its own run once; the wakes it got meanwhile end as received woken runs", async () => {
    await seedRunning("k");
    await beat("wrk_a", t0);
    expect((await claim("wrk_a", t0))?.runId).toBe("run_k");
    // A is killed. Two other Changes of the project land: canonical.advanced wakes every running
    // Task's Agent (core router.ts, routeAdvanced), this one's too, whose runner is dead.
    await wake("k", "cmd_adv_1", "canonical_advanced");
    await wake("k", "cmd_adv_2", "canonical_advanced");
    // B takes the dead runner's run over, and receives the woken runs as the runner does.
    await beat("wrk_b", at(TAKEOVER + 1), 2000);
    const b = await claim("wrk_b", at(TAKEOVER + 1));
    expect(b?.runId).toBe("run_k");
    for (let i = 0; i < 2; i++) {
      const woken = await claim("wrk_b", at(TAKEOVER + 1));
      if (!woken) throw new Error("a woken run is queued");
      expect(await receiveWake(t.db, { runId: woken.runId, editedPaths: [] }, deps)).toMatchObject({ stale: false });
    }
    if (!b) throw new Error("unreachable");
    await complete("k", b, "commit_b");
    expect(await results("k")).toEqual({
      task: "completed",
      runs: [
        ["dispatch", "completed"],
        ["canonical_advanced", "completed"],
        ["canonical_advanced", "completed"],
      ],
      changeSets: [["run_k", "commit_b"]],
      completedBy: [{ runId: "run_k", changeSetId: "cs_k_commit_b" }],
      published: 1,
    });
  });
});
