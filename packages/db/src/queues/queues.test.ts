import { commandIds, loadConfig } from "@rhumbatron/core";
import type { Nudger } from "@rhumbatron/runtime";
import {
  type CommandHandler,
  consumeQueue,
  deliverMessage,
  enqueueCommand,
  expireQueueMessages,
  leaseMessages,
  requeueDeferred,
} from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { seedChange, seedProjects, useTestDatabase } from "../testing/index.ts";
import { withTransaction } from "../transaction.ts";
import { deadLetterHandler, dismissDeadLetter, listDeadLetters, retryDeadLetter } from "./dead-letters.ts";
import { requestWorkflowStart, workflowStartHandler } from "./workflows.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
let clock = new Date("2026-07-01T10:00:00Z");
const nudges: string[] = [];
const nudger: Nudger = { nudge: async (_c, ch) => void nudges.push(ch) };
const logs: string[] = [];
const deps = {
  config,
  nudger,
  now: () => clock,
  owner: "consumer-a",
  log: (_f: Record<string, unknown>, m: string) => void logs.push(m),
};
const advance = (s: number) => {
  clock = new Date(clock.getTime() + s * 1000);
};

async function seedTask(projectId: string, changeId: string, taskId: string) {
  await seedProjects(t.db, [projectId]);
  await seedChange(t.db, projectId, changeId);
  await t.db.task.upsert({
    where: { id: taskId },
    create: { id: taskId, changeId, key: taskId, title: taskId, state: "running" },
    update: {},
  });
}

/** What every agent.wake carries (the catalogue refuses a wake without its Agent). */
const WAKE = { agentId: "agt_q", reason: "test" };

async function send(
  commandId: string,
  type: Parameters<typeof enqueueCommand>[1]["commandType"],
  o: { projectId: string; changeId?: string; taskId?: string; payload?: Record<string, unknown> },
) {
  return withTransaction(t.db, (ctx) =>
    enqueueCommand(
      ctx,
      {
        commandId,
        commandType: type,
        projectId: o.projectId,
        changeId: o.changeId ?? null,
        taskId: o.taskId ?? null,
        payload: o.payload ?? {},
      },
      deps,
    ),
  );
}

/** A handler whose effect is a row we can count, written in the handler's (ack) transaction. */
function effectHandler(
  types: string[],
  behave: (commandId: string) => "done" | "more" | "throw" = () => "done",
): CommandHandler {
  return {
    commandTypes: types,
    async handle(ctx) {
      const b = behave(ctx.command.commandId);
      await ctx.tx.usageCounter.upsert({
        where: { counter_scopeId_window: { counter: "effect", scopeId: ctx.command.commandId, window: "-" } },
        create: { counter: "effect", scopeId: ctx.command.commandId, window: "-", count: 1 },
        update: { count: { increment: 1 } },
      });
      if (b === "throw") throw new Error(`handler failed for ${ctx.command.commandId}`);
      return b;
    },
  };
}
const effects = async (commandId: string) =>
  (
    await t.db.usageCounter.findUnique({
      where: { counter_scopeId_window: { counter: "effect", scopeId: commandId, window: "-" } },
    })
  )?.count ?? 0;

describe("queues", () => {
  it("sends a command only if the caller's transaction commits, and a second send is a duplicate", async () => {
    await seedProjects(t.db, ["proj_q1"]);
    await withTransaction(t.db, async (ctx) => {
      await enqueueCommand(
        ctx,
        { commandId: "cmd_rolled", commandType: "project.provision", projectId: "proj_q1", payload: {} },
        deps,
      );
      throw new Error("state change failed");
    }).catch(() => {});
    expect(await t.db.queueMessage.count({ where: { commandId: "cmd_rolled" } })).toBe(0);
    expect(await send("cmd_kept", "project.provision", { projectId: "proj_q1" })).toMatchObject({
      sent: true,
      duplicate: false,
      queue: "integration",
    });
    expect(await send("cmd_kept", "project.provision", { projectId: "proj_q1" })).toMatchObject({
      sent: true,
      duplicate: true,
    });
    expect(await t.db.queueMessage.count({ where: { commandId: "cmd_kept" } })).toBe(1);
    expect(nudges).toContain("queue_integration");
    await t.db.queueMessage.deleteMany({});
  });

  it("refuses a command whose payload the catalogue does not accept, and sends nothing", async () => {
    await seedProjects(t.db, ["proj_q0"]);
    const err = await send("cmd_index_proj_q0_S1", "index.build", { projectId: "proj_q0" }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "INVALID_INPUT", message: expect.stringContaining("generation") });
    expect(await t.db.queueMessage.count({ where: { commandId: "cmd_index_proj_q0_S1" } })).toBe(0);
  });

  it("retries a poison command 3 times 30 s apart, dead-letters it, blocks the Task and writes task.failed once", async () => {
    await seedTask("proj_q2", "chg_q2", "task_q2");
    const id = commandIds.wake("task_q2");
    await send(id, "agent.wake", { projectId: "proj_q2", changeId: "chg_q2", taskId: "task_q2", payload: WAKE });
    const handlers = [effectHandler(["agent.wake"], () => "throw")];
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await consumeQueue(t.db, "agent-wakeups", handlers, deps);
      seen.push(Object.entries(r.actions).find(([, n]) => n > 0)?.[0] ?? "none");
      // Not available again before its retry delay.
      expect((await consumeQueue(t.db, "agent-wakeups", handlers, deps)).leased).toBe(0);
      advance(30);
    }
    expect(seen).toEqual(["retry", "retry", "retry", "dead_letter"]);
    const onDlq = await t.db.queueMessage.findFirstOrThrow({ where: { queue: "dead-letter", commandId: id } });
    expect(onDlq).toMatchObject({ originQueue: "agent-wakeups", lastError: "handler failed for cmd_task_q2_ready" });

    const dl = [deadLetterHandler(deps)];
    await consumeQueue(t.db, "dead-letter", dl, deps);
    const row = await t.db.deadLetter.findUniqueOrThrow({ where: { commandId: id } });
    expect(row).toMatchObject({
      status: "open",
      originQueue: "agent-wakeups",
      reason: "handler failed for cmd_task_q2_ready",
      kind: "command",
    });
    expect(await t.db.task.findUniqueOrThrow({ where: { id: "task_q2" } })).toMatchObject({
      state: "blocked",
      blockedLimit: "dead_letter",
    });
    const failed = await t.db.outboxRow.findMany({ where: { projectId: "proj_q2", eventType: "task.failed" } });
    expect(failed).toHaveLength(1);

    // The same dead letter delivered again writes nothing new, and nothing is re-sent by itself.
    await withTransaction(t.db, (ctx) =>
      ctx.tx.queueMessage.create({
        data: {
          queue: "dead-letter",
          commandId: id,
          commandType: "agent.wake",
          envelope: onDlq.envelope as object,
          originQueue: "agent-wakeups",
          lastError: "again",
          expiresAt: new Date(clock.getTime() + 86_400_000),
        },
      }),
    );
    await consumeQueue(t.db, "dead-letter", dl, deps);
    expect(await t.db.deadLetter.count({ where: { commandId: id } })).toBe(1);
    expect((await t.db.deadLetter.findUniqueOrThrow({ where: { commandId: id } })).reason).toBe(
      "handler failed for cmd_task_q2_ready",
    );
    expect(await t.db.outboxRow.count({ where: { projectId: "proj_q2", eventType: "task.failed" } })).toBe(1);
    expect(await t.db.queueMessage.count({ where: { queue: "agent-wakeups" } })).toBe(0);
  });

  it("Retry re-sends to the origin queue once; Dismiss records who, when and why", async () => {
    await seedTask("proj_q3", "chg_q3", "task_q3");
    const tenantId = "ten_test";
    for (const id of ["cmd_r1", "cmd_r2"]) {
      await send(id, "agent.wake", { projectId: "proj_q3", changeId: "chg_q3", taskId: "task_q3", payload: WAKE });
    }
    const failing = [effectHandler(["agent.wake"], () => "throw")];
    for (let i = 0; i < 4; i++) {
      await consumeQueue(t.db, "agent-wakeups", failing, deps);
      advance(30);
    }
    await consumeQueue(t.db, "dead-letter", [deadLetterHandler(deps)], deps);
    const open = (await listDeadLetters(t.db, { tenantId, status: "open", limit: 10 })).filter(
      (d) => d.projectId === "proj_q3",
    );
    expect(open.map((d) => d.commandId).sort()).toEqual(["cmd_r1", "cmd_r2"]);

    const dl1 = open.find((d) => d.commandId === "cmd_r1")?.id as string;
    const dl2 = open.find((d) => d.commandId === "cmd_r2")?.id as string;
    expect(await retryDeadLetter(t.db, { tenantId, deadLetterId: dl1, operatorId: "usr_op" }, deps)).toEqual({
      queue: "agent-wakeups",
      commandId: "cmd_r1",
    });
    await expect(
      retryDeadLetter(t.db, { tenantId, deadLetterId: dl1, operatorId: "usr_op" }, deps),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    const resent = await t.db.queueMessage.findMany({ where: { queue: "agent-wakeups", commandId: "cmd_r1" } });
    expect(resent).toHaveLength(1);
    expect((resent[0]?.envelope as { attempt?: number } | undefined)?.attempt).toBe(1);
    expect(await t.db.deadLetter.findUniqueOrThrow({ where: { id: dl1 } })).toMatchObject({
      status: "retried",
      resolvedBy: "usr_op",
    });
    // It fails again: the same record opens again with the envelope as it failed this time, so the
    // next Retry sends the next attempt rather than the first envelope again.
    for (let i = 0; i < 4; i++) {
      await consumeQueue(t.db, "agent-wakeups", failing, deps);
      advance(30);
    }
    await consumeQueue(t.db, "dead-letter", [deadLetterHandler(deps)], deps);
    const reopened = await t.db.deadLetter.findUniqueOrThrow({ where: { id: dl1 } });
    expect(reopened).toMatchObject({ status: "open", attempts: 2 });
    expect((reopened.payload as { attempt?: number }).attempt).toBe(1);
    await retryDeadLetter(t.db, { tenantId, deadLetterId: dl1, operatorId: "usr_op" }, deps);
    const again = await t.db.queueMessage.findFirstOrThrow({ where: { queue: "agent-wakeups", commandId: "cmd_r1" } });
    expect((again.envelope as { attempt?: number }).attempt).toBe(2);

    await expect(
      dismissDeadLetter(t.db, { tenantId, deadLetterId: dl2, operatorId: "usr_op", reason: "  " }, clock),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await dismissDeadLetter(
      t.db,
      { tenantId, deadLetterId: dl2, operatorId: "usr_op", reason: "agent retired" },
      clock,
    );
    expect(await t.db.deadLetter.findUniqueOrThrow({ where: { id: dl2 } })).toMatchObject({
      status: "dismissed",
      resolveNote: "agent retired",
      resolvedBy: "usr_op",
    });
    await expect(
      retryDeadLetter(t.db, { tenantId, deadLetterId: dl2, operatorId: "usr_op" }, deps),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    // Another tenant cannot reach them.
    await expect(
      retryDeadLetter(t.db, { tenantId: "ten_other", deadLetterId: dl2, operatorId: "x" }, deps),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await t.db.queueMessage.deleteMany({});
  });

  it("sends an unknown command type straight to the dead-letter queue, without retries", async () => {
    await seedProjects(t.db, ["proj_q4"]);
    await send("cmd_unknown", "project.cleanup", { projectId: "proj_q4" });
    const r = await consumeQueue(t.db, "integration", [effectHandler(["project.provision"])], deps);
    expect(r.actions.dead_letter).toBe(1);
    const m = await t.db.queueMessage.findFirstOrThrow({ where: { queue: "dead-letter", commandId: "cmd_unknown" } });
    expect(m.lastError).toBe("unknown command type project.cleanup on integration");
    await t.db.queueMessage.deleteMany({});
  });

  it("brings back a crashed consumer's leased messages after the lease, and each effect happens once", async () => {
    await seedProjects(t.db, ["proj_q5"]);
    for (const id of ["cmd_k1", "cmd_k2", "cmd_k3"]) await send(id, "project.provision", { projectId: "proj_q5" });
    const handlers = [effectHandler(["project.provision"])];
    const leased = await leaseMessages(t.db, "integration", deps);
    expect(leased.map((m) => m.commandId)).toEqual(["cmd_k1", "cmd_k2", "cmd_k3"]);
    await deliverMessage(t.db, leased[0] as (typeof leased)[number], handlers, deps);
    // Consumer A dies here. Consumer B sees nothing until the lease runs out.
    const b = { ...deps, owner: "consumer-b" };
    expect((await consumeQueue(t.db, "integration", handlers, b)).leased).toBe(0);
    advance(config.queues.leaseSeconds + 1);
    const r = await consumeQueue(t.db, "integration", handlers, b);
    expect(r).toMatchObject({ leased: 2, actions: { ack: 2 } });
    expect([await effects("cmd_k1"), await effects("cmd_k2"), await effects("cmd_k3")]).toEqual([1, 1, 1]);
    expect(await t.db.queueMessage.count({ where: { queue: "integration" } })).toBe(0);
  });

  it("rolls back only the failing message's effects inside a batch", async () => {
    await seedProjects(t.db, ["proj_q10"]);
    for (const id of ["cmd_b1", "cmd_b2", "cmd_b3"]) await send(id, "project.provision", { projectId: "proj_q10" });
    const handlers = [effectHandler(["project.provision"], (id) => (id === "cmd_b2" ? "throw" : "done"))];
    const r = await consumeQueue(t.db, "integration", handlers, deps);
    expect(r.actions).toMatchObject({ ack: 2, retry: 1 });
    expect([await effects("cmd_b1"), await effects("cmd_b2"), await effects("cmd_b3")]).toEqual([1, 0, 1]);
    expect(await t.db.queueMessage.findFirstOrThrow({ where: { commandId: "cmd_b2" } })).toMatchObject({
      lastError: "handler failed for cmd_b2",
      deliveries: 1,
    });
    await t.db.queueMessage.deleteMany({});
  });

  it("gives bounded work at most 4 deliveries, acks the last, and the maintenance tick queues it again", async () => {
    await seedProjects(t.db, ["proj_q6"]);
    await send("cmd_more", "forks.sweep", { projectId: "proj_q6" });
    const handlers = [effectHandler(["forks.sweep"], () => "more")];
    const actions: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await consumeQueue(t.db, "integration", handlers, deps);
      actions.push(Object.entries(r.actions).find(([, n]) => n > 0)?.[0] ?? "none");
    }
    expect(actions).toEqual(["redeliver", "redeliver", "redeliver", "ack_and_defer"]);
    expect(await effects("cmd_more")).toBe(4);
    expect(await t.db.queueMessage.count({ where: { commandId: "cmd_more" } })).toBe(0);
    expect(await t.db.deadLetter.count({ where: { commandId: "cmd_more" } })).toBe(0);
    expect(await requeueDeferred(t.db, deps)).toBe(1);
    const back = await t.db.queueMessage.findFirstOrThrow({ where: { commandId: "cmd_more" } });
    expect(back).toMatchObject({ queue: "integration", deliveries: 0 });
    expect(await t.db.deferredCommand.count()).toBe(0);
    await t.db.queueMessage.deleteMany({});
  });

  it("refuses the command past the daily cap, records it, and lets the caller's transaction commit", async () => {
    await seedTask("proj_q7", "chg_q7", "task_q7");
    const capped = { ...deps, config: loadConfig("dev", { causal: { commandsPerChangePerDay: 3 } }) };
    const results = await withTransaction(t.db, async (ctx) => {
      const out = [];
      for (let i = 0; i < 4; i++) {
        out.push(
          await enqueueCommand(
            ctx,
            {
              commandId: `cmd_cap${i}`,
              commandType: "change.dispatch",
              projectId: "proj_q7",
              changeId: "chg_q7",
              payload: {},
            },
            capped,
          ),
        );
      }
      await ctx.tx.change.update({ where: { id: "chg_q7" }, data: { title: "still committed" } });
      return out;
    });
    expect(results.map((r) => r.sent)).toEqual([true, true, true, false]);
    expect((await t.db.change.findUniqueOrThrow({ where: { id: "chg_q7" } })).title).toBe("still committed");
    expect(await t.db.metricPoint.count({ where: { name: "command_cap_refused", projectId: "proj_q7" } })).toBe(1);
    expect(logs).toContain("command refused: the Change reached its daily command cap");
    // The next day has a fresh allowance.
    advance(86_400);
    const next = await withTransaction(t.db, (ctx) =>
      enqueueCommand(
        ctx,
        {
          commandId: "cmd_cap_next",
          commandType: "change.dispatch",
          projectId: "proj_q7",
          changeId: "chg_q7",
          payload: {},
        },
        capped,
      ),
    );
    expect(next.sent).toBe(true);
    await t.db.queueMessage.deleteMany({});
  });

  it("starts one workflow instance per key, through the queue or directly when the send fails", async () => {
    await seedProjects(t.db, ["proj_q8"]);
    const start = () =>
      withTransaction(t.db, (ctx) =>
        requestWorkflowStart(ctx, { kind: "verification", key: "cand_1", projectId: "proj_q8" }, deps),
      );
    expect(await start()).toEqual({ via: "queue", duplicate: false });
    const msg = await t.db.queueMessage.findFirstOrThrow({ where: { queue: "verification" } });
    expect(msg.commandId).toBe("cmd_cand_1_verify");
    const handlers = [workflowStartHandler(deps)];
    await consumeQueue(t.db, "verification", handlers, deps);
    // A redelivery of the same command finds the instance and starts nothing new.
    await start();
    await consumeQueue(t.db, "verification", handlers, deps);
    expect(await t.db.workflowInstance.findMany({ where: { instanceId: "cand_1" } })).toHaveLength(1);

    const broken = async () => {
      throw new Error("queue unavailable");
    };
    const direct = await withTransaction(t.db, (ctx) =>
      requestWorkflowStart(ctx, { kind: "release", key: "rel_proj_q8_1", projectId: "proj_q8" }, deps, broken),
    );
    expect(direct).toEqual({ via: "direct", duplicate: false });
    expect(await t.db.workflowInstance.findUniqueOrThrow({ where: { instanceId: "rel_proj_q8_1" } })).toMatchObject({
      workflow: "release",
      startedBy: "producer",
    });
    const again = await withTransaction(t.db, (ctx) =>
      requestWorkflowStart(ctx, { kind: "release", key: "rel_proj_q8_1", projectId: "proj_q8" }, deps, broken),
    );
    expect(again).toEqual({ via: "direct", duplicate: true });
  });

  it("drops messages past the 1-day retention", async () => {
    await seedProjects(t.db, ["proj_q9"]);
    await send("cmd_old", "project.provision", { projectId: "proj_q9" });
    advance(86_400);
    expect((await consumeQueue(t.db, "integration", [effectHandler(["project.provision"])], deps)).leased).toBe(0);
    expect(await expireQueueMessages(t.db, clock)).toBe(1);
  });
});
