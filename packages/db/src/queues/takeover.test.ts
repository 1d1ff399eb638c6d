import { commandIds, loadConfig } from "@rhumbatron/core";
import {
  claimWorkflowInstance,
  consumeOnce,
  doneWorking,
  enqueueCommand,
  leaseMessages,
  markWorkerStopped,
  reapDeadWorkersOnHost,
  recordBeat,
  type Subscription,
  type WorkerBeat,
  workingOn,
} from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { seedChange, seedProjects, useTestDatabase } from "../testing/index.ts";
import { withTransaction } from "../transaction.ts";
import { claimNextRun } from "../work-graph/runs.ts";
import { WORKFLOWS } from "./workflows.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
const TAKEOVER = config.worker.takeoverSeconds;
const t0 = new Date("2026-07-01T10:00:00Z");
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const nudger = { nudge: async () => {} };

const beatOf = (workerId: string, over: Partial<WorkerBeat> = {}): WorkerBeat => ({
  workerId,
  executor: "local",
  hostname: "host-a",
  pid: 1000,
  version: "0.1.0",
  startedAt: t0,
  sandboxKind: null,
  sandboxIsolates: null,
  sandboxNote: null,
  ...over,
});

/** A project with one verification instance `cand_<x>` and one running Agent run `run_<x>`. */
async function seedLeasable(x: string) {
  await seedProjects(t.db, [`proj_${x}`]);
  await seedChange(t.db, `proj_${x}`, `chg_${x}`);
  await t.db.workflowInstance.create({
    data: { instanceId: `cand_${x}`, workflow: WORKFLOWS.verification, input: {}, startedBy: "test" },
  });
  await t.db.task.create({ data: { id: `tsk_${x}`, changeId: `chg_${x}`, key: "a", title: "a", state: "running" } });
  await t.db.agentRun.create({
    data: {
      id: `run_${x}`,
      taskId: `tsk_${x}`,
      changeId: `chg_${x}`,
      agentId: `agt_${x}`,
      wakeCommandId: `cmd_${x}`,
      reason: "t",
    },
  });
}

const claimWf = (owner: string, now: Date) =>
  claimWorkflowInstance(t.db, WORKFLOWS.verification, { now, leaseSeconds: 3600, owner, takeoverSeconds: TAKEOVER });
const claimRun = (runner: string, now: Date) =>
  claimNextRun(t.db, { now, runner, staleAfterMs: 3_600_000, takeoverSeconds: TAKEOVER });

/** Worker A claims at t0 (and keeps beating until `aliveUntil`); worker B tries at `when`. */
async function aBeatsUntil(aliveUntil: number) {
  for (let s = 0; s <= aliveUntil; s += config.worker.heartbeatSeconds) await recordBeat(t.db, beatOf("wrk_a"), at(s));
  await recordBeat(t.db, beatOf("wrk_b", { pid: 2000 }), at(aliveUntil + TAKEOVER + 1));
}

describe("a lease held by a dead worker is taken over within worker.takeoverSeconds", () => {
  it("queue messages: not while the holder beats, at once after its beats stop for takeoverSeconds", async () => {
    await seedProjects(t.db, ["proj_l"]);
    await withTransaction(t.db, (ctx) =>
      enqueueCommand(
        ctx,
        {
          commandId: commandIds.indexBuild("proj_l", 1),
          commandType: "index.build",
          projectId: "proj_l",
          changeId: null,
          taskId: null,
          payload: { generation: 1 },
        },
        { config, nudger, now: () => t0 },
      ),
    );
    const lease = (owner: string, now: Date) =>
      leaseMessages(t.db, "indexing", { config, nudger, now: () => now, owner });
    await recordBeat(t.db, beatOf("wrk_a"), t0);
    expect(await lease("wrk_a", t0)).toHaveLength(1);
    // A still beats at +20 s; at +40 s its lease (config.queues.leaseSeconds) has long to run.
    await recordBeat(t.db, beatOf("wrk_a"), at(20));
    expect(await lease("wrk_b", at(20 + TAKEOVER))).toHaveLength(0);
    expect(await lease("wrk_b", at(20 + TAKEOVER + 1))).toHaveLength(1);
    expect(config.queues.leaseSeconds).toBeGreaterThan(20 + TAKEOVER + 1);
  });

  it("workflow instances and Agent runs, and a stopped worker's are free at once", async () => {
    await seedLeasable("w");

    await recordBeat(t.db, beatOf("wrk_a"), t0);
    expect((await claimWf("wrk_a", t0))?.instanceId).toBe("cand_w");
    expect(await claimRun("wrk_a", t0)).toBe("run_w");
    // A is alive: B gets nothing, however often it asks.
    await aBeatsUntil(0);
    expect(await claimWf("wrk_b", at(5))).toBeNull();
    expect(await claimRun("wrk_b", at(5))).toBeNull();
    // A stopped cleanly (or was reaped): free at once, though its leases have an hour left.
    await markWorkerStopped(t.db, "wrk_a", at(6));
    expect((await claimWf("wrk_b", at(6)))?.attempts).toBe(2);
    expect(await claimRun("wrk_b", at(6))).toBe("run_w");
    const run = await t.db.agentRun.findUniqueOrThrow({ where: { id: "run_w" } });
    expect(run.runnerId).toBe("wrk_b");
    const wf = await t.db.workflowInstance.findUniqueOrThrow({ where: { instanceId: "cand_w" } });
    expect(wf.leaseOwner).toBe("wrk_b");
  });

  it("stream cursors: a dead consumer's cursor is taken over; a holder with no heartbeat waits for its lease", async () => {
    const sub: Subscription = { name: "test-sub", group: (e) => (e.length ? [e] : []), apply: async () => {} };
    await recordBeat(t.db, beatOf("wrk_c"), t0);
    await t.db.streamCursor.create({
      data: { subscription: "test-sub", streamIndex: 0, leaseOwner: "wrk_c", leasedUntil: at(3600) },
    });
    const consume = (owner: string, now: Date) => consumeOnce(t.db, sub, 0, { config, now: () => now, owner });
    expect((await consume("wrk_b", at(TAKEOVER))).outcome).toBe("busy");
    expect((await consume("wrk_b", at(TAKEOVER + 1))).outcome).toBe("empty");
    // No heartbeat row: a tool or a test; only the lease's own end frees it.
    await t.db.streamCursor.update({
      where: { subscription_streamIndex: { subscription: "test-sub", streamIndex: 0 } },
      data: { leaseOwner: "a-tool", leasedUntil: at(3600) },
    });
    expect((await consume("wrk_b", at(3599))).outcome).toBe("busy");
    expect((await consume("wrk_b", at(3601))).outcome).toBe("empty");
  });
});

describe("a live holder's orphan (its work ended without letting go) is its own to take again at once", () => {
  it("Agent runs, workflow instances and queue messages: not while it works on them, at once after", async () => {
    await seedLeasable("o");
    await withTransaction(t.db, (ctx) =>
      enqueueCommand(
        ctx,
        {
          commandId: commandIds.indexBuild("proj_o", 1),
          commandType: "index.build",
          projectId: "proj_o",
          changeId: null,
          taskId: null,
          payload: { generation: 1 },
        },
        { config, nudger, now: () => t0 },
      ),
    );
    const lease = (owner: string, now: Date) =>
      leaseMessages(t.db, "indexing", { config, nudger, now: () => now, owner });
    const claimAll = async (owner: string, now: Date) => ({
      run: await claimRun(owner, now),
      workflow: (await claimWf(owner, now))?.instanceId ?? null,
      messages: (await lease(owner, now)).map((m) => m.commandId),
    });
    const none = { run: null, workflow: null, messages: [] };
    const all = { run: "run_o", workflow: "cand_o", messages: [commandIds.indexBuild("proj_o", 1)] };

    await recordBeat(t.db, beatOf("wrk_o"), t0);
    await recordBeat(t.db, beatOf("wrk_p", { pid: 2000 }), t0);
    expect(await claimAll("wrk_o", t0)).toEqual(all);
    // While O works on them, neither O nor anyone else takes them again.
    expect(await claimAll("wrk_o", at(1))).toEqual(none);
    expect(await claimAll("wrk_p", at(1))).toEqual(none);
    expect(workingOn("wrk_o", "agent_run")).toEqual(["run_o"]);
    // O's work ended without letting go (the database went away as it tried): the leases have an
    // hour to run and O beats on, so P still gets nothing, but O takes them again at once.
    // It takes them after the same wait a dead holder's leases get (so a failure that repeats is
    // retried at that pace), not on the very next tick.
    doneWorking("wrk_o", "agent_run", ["run_o"], at(2));
    doneWorking("wrk_o", "workflow", ["cand_o"], at(2));
    doneWorking("wrk_o", "queue_message", workingOn("wrk_o", "queue_message"), at(2));
    for (let s = 0; s <= 2 + TAKEOVER; s += config.worker.heartbeatSeconds)
      await recordBeat(t.db, beatOf("wrk_o"), at(s));
    expect(await claimAll("wrk_o", at(TAKEOVER))).toEqual(none);
    expect(await claimAll("wrk_p", at(3 + TAKEOVER))).toEqual(none);
    expect(await claimAll("wrk_o", at(3 + TAKEOVER))).toEqual(all);
    const run = await t.db.agentRun.findUniqueOrThrow({ where: { id: "run_o" } });
    expect(run.runnerId).toBe("wrk_o");
  });

  it("a holder whose own beat is late never takes what it works on as a dead worker's, in any lane", async () => {
    await seedLeasable("s");
    await recordBeat(t.db, beatOf("wrk_s"), t0);
    expect((await claimWf("wrk_s", t0))?.instanceId).toBe("cand_s");
    expect(await claimRun("wrk_s", t0)).toBe("run_s");
    // S's beat is late (a busy event loop): its other lanes, asking together, still get nothing.
    const late = at(TAKEOVER + 5);
    const lanes = await Promise.all([0, 1, 2, 3].map(() => claimWf("wrk_s", late)));
    expect(lanes.filter((c) => c !== null)).toEqual([]);
    expect(await Promise.all([claimRun("wrk_s", late), claimRun("wrk_s", late)])).toEqual([null, null]);
    // Another worker counts S as dead, rightly, and takes both over.
    await recordBeat(t.db, beatOf("wrk_t", { pid: 2000 }), late);
    expect((await claimWf("wrk_t", late))?.instanceId).toBe("cand_s");
    expect(await claimRun("wrk_t", late)).toBe("run_s");
  });

  it("two claims of one holder at once never take the same orphan twice", async () => {
    await seedProjects(t.db, ["proj_q"]);
    await seedChange(t.db, "proj_q", "chg_q");
    await t.db.task.create({ data: { id: "tsk_q", changeId: "chg_q", key: "a", title: "a", state: "running" } });
    await t.db.agentRun.create({
      data: { id: "run_q", taskId: "tsk_q", changeId: "chg_q", agentId: "agt_q", wakeCommandId: "cmd_q", reason: "t" },
    });
    await recordBeat(t.db, beatOf("wrk_q"), t0);
    const claimRun = () =>
      claimNextRun(t.db, { now: t0, runner: "wrk_q", staleAfterMs: 3_600_000, takeoverSeconds: TAKEOVER });
    const taken = await Promise.all([claimRun(), claimRun(), claimRun(), claimRun()]);
    expect(taken.filter((id) => id === "run_q")).toHaveLength(1);
    doneWorking("wrk_q", "agent_run", ["run_q"], at(-TAKEOVER - 1));
    const again = await Promise.all([claimRun(), claimRun(), claimRun()]);
    expect(again.filter((id) => id === "run_q")).toHaveLength(1);
  });
});

describe("reapDeadWorkersOnHost", () => {
  it("marks stopped this host's earlier workers that no longer run, or had this very pid", async () => {
    await recordBeat(t.db, beatOf("wrk_gone", { pid: 11, hostname: "host-r" }), t0);
    await recordBeat(t.db, beatOf("wrk_alive", { pid: 12, hostname: "host-r" }), t0);
    await recordBeat(t.db, beatOf("wrk_samepid", { pid: 1, hostname: "host-r" }), t0);
    await recordBeat(t.db, beatOf("wrk_elsewhere", { pid: 11, hostname: "host-s" }), t0);
    await recordBeat(t.db, beatOf("wrk_me", { pid: 1, hostname: "host-r" }), t0);
    const reaped = await reapDeadWorkersOnHost(
      t.db,
      { workerId: "wrk_me", hostname: "host-r", pid: 1 },
      (pid) => pid === 12 || pid === 1,
      at(1),
    );
    expect(reaped.sort()).toEqual(["wrk_gone", "wrk_samepid"]);
    const rows = await t.db.workerHeartbeat.findMany({
      where: { hostname: { in: ["host-r", "host-s"] } },
      orderBy: { workerId: "asc" },
    });
    expect(Object.fromEntries(rows.map((r) => [r.workerId, r.stoppedAt?.toISOString() ?? null]))).toEqual({
      wrk_alive: null,
      wrk_elsewhere: null,
      wrk_gone: at(1).toISOString(),
      wrk_me: null,
      wrk_samepid: at(1).toISOString(),
    });
    // A second start finds nothing more to reap.
    expect(
      await reapDeadWorkersOnHost(t.db, { workerId: "wrk_me", hostname: "host-r", pid: 1 }, () => true, at(2)),
    ).toEqual([]);
  });
});
