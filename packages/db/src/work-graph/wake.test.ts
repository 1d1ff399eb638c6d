import { commandIds, loadConfig } from "@rhumbatron/core";
import { type CommandHandler, consumeQueue, enqueueCommand, pgNotifyNudger } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { seedChange, seedProjects, useTestDatabase } from "../testing/index.ts";
import { withTransaction } from "../transaction.ts";
import { handleWake, type WakeOutcome } from "./wake.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
const deps = { config, nudger: pgNotifyNudger, now: () => new Date("2026-09-01T00:00:00Z"), owner: "w" };
const outcomes: WakeOutcome[] = [];
const handler: CommandHandler = {
  commandTypes: ["agent.wake"],
  async handle(ctx) {
    const r = await handleWake(ctx, deps);
    outcomes.push(r.outcome);
    return r.result;
  },
};

async function wake(commandId: string, taskId: string, payload: Record<string, unknown>) {
  await withTransaction(t.db, (ctx) =>
    enqueueCommand(
      ctx,
      { commandId, commandType: "agent.wake", projectId: "proj_w", changeId: "chg_w", taskId, payload },
      deps,
    ),
  );
  await consumeQueue(t.db, "agent-wakeups", [handler], deps);
  return outcomes.at(-1);
}

describe("the wake consumer re-checks relevance", () => {
  it("starts a dispatched Task once, treats a repeat as a duplicate, and ends stale wakes as false wakeups", async () => {
    await seedProjects(t.db, ["proj_w"]);
    await seedChange(t.db, "proj_w", "chg_w");
    await t.db.task.createMany({
      data: [
        {
          id: "task_go",
          changeId: "chg_w",
          key: "go",
          title: "go",
          state: "ready",
          dispatched: true,
          intents: { paths: ["src/a.ts"], prefixes: [] },
        },
        { id: "task_done", changeId: "chg_w", key: "done", title: "done", state: "completed" },
      ],
    });
    expect(await wake(commandIds.wake("task_go"), "task_go", { agentId: "agt_task_go", reason: "dispatch" })).toBe(
      "started",
    );
    expect(await t.db.task.findUniqueOrThrow({ where: { id: "task_go" } })).toMatchObject({
      state: "running",
      agentId: "agt_task_go",
    });
    expect(await t.db.agentRun.count({ where: { taskId: "task_go" } })).toBe(1);
    expect(await t.db.outboxRow.count({ where: { eventType: "task.started" } })).toBe(1);
    // The Agent takes the Task with its claim on the Task's intents, in the same transaction.
    const claims = await t.db.outboxRow.findMany({ where: { eventType: "claim.acquired" } });
    expect(claims.map((c) => (c.envelope as { payload: unknown }).payload)).toEqual([
      { agentId: "agt_task_go", paths: ["src/a.ts"], prefixes: [], attempt: 1 },
    ]);
    // The same wake again (a redelivery or a second send after ack): the Agent already holds the Task.
    expect(await wake(commandIds.wake("task_go"), "task_go", { agentId: "agt_task_go", reason: "dispatch" })).toBe(
      "duplicate",
    );
    expect(await t.db.agentRun.count({ where: { taskId: "task_go" } })).toBe(1);

    expect(
      await wake(commandIds.wake("task_done"), "task_done", { agentId: "agt_task_done", reason: "dispatch" }),
    ).toBe("stale");
    // An overlap wake whose paths no longer overlap what the Agent holds.
    expect(
      await wake("cmd_wake_x_1", "task_go", {
        agentId: "agt_task_go",
        reason: "exact_overlap",
        eventPaths: ["docs/readme.md"],
      }),
    ).toBe("stale");
    // An overlap wake that still holds resumes the Agent with a queued run.
    expect(
      await wake("cmd_wake_x_2", "task_go", {
        agentId: "agt_task_go",
        reason: "exact_overlap",
        eventPaths: ["src/a.ts"],
      }),
    ).toBe("resumed");
    expect(await t.db.agentRun.count({ where: { taskId: "task_go" } })).toBe(2);
    // The woken run carries its wake to the Agent.
    expect(await t.db.agentRun.findUniqueOrThrow({ where: { wakeCommandId: "cmd_wake_x_2" } })).toMatchObject({
      status: "queued",
      reason: "exact_overlap",
      wake: { eventPaths: ["src/a.ts"], overlapping: [] },
    });
    // A wake for another Agent than the holder is stale.
    expect(await wake("cmd_wake_x_3", "task_go", { agentId: "agt_someone_else", reason: "exact_overlap" })).toBe(
      "stale",
    );

    // The dispatch wake counts here; the resumed one counts when it reaches the Agent (agent.woken).
    const metrics = await t.db.metricPoint.groupBy({ by: ["name"], _count: true, where: { projectId: "proj_w" } });
    expect(Object.fromEntries(metrics.map((m) => [m.name, m._count]))).toEqual({
      agent_wakeup: 1,
      agent_false_wakeup: 3,
    });
  });
});
