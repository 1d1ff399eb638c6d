import { loadConfig } from "@rhumbatron/core";
import { pgNotifyNudger } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { seedChange, seedProjects, useTestDatabase } from "../testing/index.ts";
import { withTransaction } from "../transaction.ts";
import { cancelChange, finishTask } from "./complete-task.ts";
import { dispatchChange } from "./dispatch.ts";
import { pendingWakes, receiveWake } from "./woken.ts";

/** Intents and claims written with the state changes they record, and a wake reaching its Agent. */
const t = useTestDatabase();
const deps = { config: loadConfig("dev"), nudger: pgNotifyNudger, now: () => new Date() };

const events = async (type: string, projectId?: string) =>
  (await t.db.outboxRow.findMany({ where: { eventType: type, projectId }, orderBy: { projectSeq: "asc" } })).map(
    (r) => r.envelope as { eventId: string; taskId: string | null; payload: Record<string, unknown> },
  );

async function holders(project: string) {
  await seedProjects(t.db, [project]);
  await seedChange(t.db, project, `chg_${project}_x`);
  await seedChange(t.db, project, `chg_${project}_y`);
  const task = (id: string, changeId: string, agentId: string, paths: string[]) => ({
    id,
    changeId,
    key: id.slice(-1),
    title: id,
    state: "running" as const,
    dispatched: true,
    agentId,
    intents: { paths, prefixes: [] },
  });
  await t.db.task.createMany({
    data: [
      task(`task_${project}_a`, `chg_${project}_x`, "agt_a", ["src/shared.ts"]),
      task(`task_${project}_b`, `chg_${project}_y`, "agt_b", ["src/shared.ts", "src/b.ts"]),
    ],
  });
  return { a: `task_${project}_a`, b: `task_${project}_b`, x: `chg_${project}_x`, y: `chg_${project}_y` };
}

/** A woken run of `taskId`'s Agent, as the wake consumer queues it for an overlap with `causeTaskId`. */
async function wokenRun(runId: string, w: { taskId: string; changeId: string; causeTaskId: string }) {
  await t.db.agentRun.create({
    data: {
      id: runId,
      taskId: w.taskId,
      changeId: w.changeId,
      agentId: "agt_a",
      wakeCommandId: `cmd_${runId}`,
      reason: "exact_overlap",
      wake: {
        causeEventId: "evt_cause",
        causeType: "intent.declared",
        causeTaskId: w.causeTaskId,
        eventPaths: ["src/shared.ts"],
        overlapping: ["src/shared.ts"],
      },
    },
  });
}

describe("intents and claims", () => {
  it("a dispatch declares each woken Task's intents, and writes change.dispatched once per Change", async () => {
    await seedProjects(t.db, ["proj_in1"]);
    await seedChange(t.db, "proj_in1", "chg_in1");
    await t.db.task.createMany({
      data: [
        {
          id: "task_in1_a",
          changeId: "chg_in1",
          key: "a",
          title: "a",
          intents: { paths: ["a.ts"], prefixes: ["lib/"] },
        },
        { id: "task_in1_b", changeId: "chg_in1", key: "b", title: "b", dependencies: ["a"], position: 1 },
      ],
    });
    await withTransaction(t.db, (ctx) => dispatchChange(ctx, "chg_in1", deps, "cmd_first"));
    expect((await events("change.dispatched")).map((e) => e.payload)).toEqual([{ readyTaskIds: ["task_in1_a"] }]);
    expect((await events("intent.declared")).map((e) => [e.taskId, e.payload])).toEqual([
      ["task_in1_a", { agentId: "agt_task_in1_a", paths: ["a.ts"], prefixes: ["lib/"], attempt: 1 }],
    ]);
    // b becomes ready later: its intent is declared, the Change is not dispatched a second time.
    await t.db.task.update({ where: { id: "task_in1_a" }, data: { state: "completed" } });
    await withTransaction(t.db, (ctx) => dispatchChange(ctx, "chg_in1", deps, "cmd_second"));
    expect(await events("change.dispatched")).toHaveLength(1);
    expect((await events("intent.declared")).map((e) => e.taskId)).toEqual(["task_in1_a", "task_in1_b"]);
    // A repeated dispatch wakes nobody new and declares nothing again.
    await withTransaction(t.db, (ctx) => dispatchChange(ctx, "chg_in1", deps, "cmd_second"));
    expect(await events("intent.declared")).toHaveLength(2);
  });

  it("a finished Task releases its claim once; a cancelled Change releases its running Tasks' claims", async () => {
    const h = await holders("proj_in2");
    await t.db.agentRun.create({
      data: {
        id: "run_in2",
        taskId: h.a,
        changeId: h.x,
        agentId: "agt_a",
        wakeCommandId: "cmd_in2",
        reason: "dispatch",
      },
    });
    const done = { taskId: h.a, runId: "run_in2", agentId: "agt_a", outcome: "completed" as const };
    await finishTask(t.db, done, deps);
    await finishTask(t.db, done, deps);
    await cancelChange(t.db, { tenantId: "ten_test", changeId: h.y, actorId: "usr_1", reason: "no" }, deps);
    await cancelChange(t.db, { tenantId: "ten_test", changeId: h.y, actorId: "usr_1", reason: "again" }, deps);
    expect((await events("claim.released")).map((e) => [e.taskId, e.payload])).toEqual([
      [h.a, { agentId: "agt_a", paths: ["src/shared.ts"], prefixes: [], attempt: 1 }],
      [h.b, { agentId: "agt_b", paths: ["src/shared.ts", "src/b.ts"], prefixes: [], attempt: 1 }],
    ]);
  });
});

describe("a wake reaching its Agent", () => {
  it("goes on while the other Task holds the path, and records it once, whoever takes it", async () => {
    const h = await holders("proj_wk1");
    await wokenRun("run_wk1", { taskId: h.a, changeId: h.x, causeTaskId: h.b });
    expect(await pendingWakes(t.db, { changeId: h.x, taskId: h.a })).toEqual(["run_wk1"]);
    const r = await receiveWake(t.db, { runId: "run_wk1", editedPaths: [] }, deps);
    expect(r).toMatchObject({ stale: false, action: "continue", paths: ["src/shared.ts"] });
    expect(r?.note).toBe(
      "continued: task b holds src/shared.ts, which this Task also touches; whichever Change lands second is recomposed on the first",
    );
    expect(await t.db.agentRun.findUniqueOrThrow({ where: { id: "run_wk1" } })).toMatchObject({
      status: "completed",
      note: r?.note,
    });
    // The runner taking the same run later finds it received.
    expect(await receiveWake(t.db, { runId: "run_wk1", editedPaths: [] }, deps)).toBeNull();
    expect(await pendingWakes(t.db, { changeId: h.x, taskId: h.a })).toEqual([]);
    expect((await events("agent.woken", "proj_wk1")).map((e) => [e.taskId, e.payload])).toEqual([
      [
        h.a,
        {
          agentId: "agt_a",
          reason: "exact_overlap",
          stale: false,
          runId: "run_wk1",
          causeEventId: "evt_cause",
          paths: ["src/shared.ts"],
          note: r?.note,
        },
      ],
    ]);
  });

  it("stops, saying why, when the other Task let go, and when the woken Task's own run already ended", async () => {
    const h = await holders("proj_wk2");
    await wokenRun("run_wk2", { taskId: h.a, changeId: h.x, causeTaskId: h.b });
    await cancelChange(t.db, { tenantId: "ten_test", changeId: h.y, actorId: "usr_1", reason: "no" }, deps);
    const r = await receiveWake(t.db, { runId: "run_wk2", editedPaths: ["src/shared.ts"] }, deps);
    expect(r).toMatchObject({
      stale: true,
      action: "stop",
      note: "stopped: task b's Change was cancelled: nothing of it will land",
    });

    await wokenRun("run_wk3", { taskId: h.a, changeId: h.x, causeTaskId: h.b });
    await t.db.agentRun.create({
      data: {
        id: "run_wk2_own",
        taskId: h.a,
        changeId: h.x,
        agentId: "agt_a",
        wakeCommandId: "cmd_wk2_own",
        reason: "dispatch",
      },
    });
    await finishTask(t.db, { taskId: h.a, runId: "run_wk2_own", agentId: "agt_a", outcome: "completed" }, deps);
    expect((await receiveWake(t.db, { runId: "run_wk3", editedPaths: [] }, deps))?.note).toBe(
      "stopped: the Task is completed: its run ended before the wake reached it",
    );
    expect((await events("agent.woken", "proj_wk2")).map((e) => e.payload.stale)).toEqual([true, true]);
  });
});
