import { loadConfig } from "@rhumbatron/core";
import type { Db } from "@rhumbatron/db";
import { seedChange, seedProjects, useTestDatabase, waitFor } from "@rhumbatron/db/testing";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { recordBeat } from "../leases/holders.ts";
import { type Nudger, pgNotifyNudger } from "../nudge.ts";
import { withTransaction } from "../transaction.ts";
import { type CommandHandler, consumeQueue } from "./consumer.ts";
import { enqueueCommand, type NewCommand, sendCommand } from "./enqueue.ts";

/**
 * Batches: a consumer leases a batch, runs its handlers in one transaction and settles the whole
 * batch in one statement. These tests pin what that must keep: each failure on its own, each
 * command's effect once after a crash, exhaustion to the dead-letter queue, deferral, the
 * record-failure rule, and the sends with the Postgres nudger.
 */
const t = useTestDatabase();
const config = loadConfig("dev");
let clock = new Date("2026-08-01T10:00:00Z");
const advance = (s: number) => {
  clock = new Date(clock.getTime() + s * 1000);
};
const nudges: string[] = [];
const nudger: Nudger = { nudge: async (_c, ch) => void nudges.push(ch) };
const logs: string[] = [];
const depsOf = (owner: string, over: Partial<{ config: typeof config; nudger: Nudger }> = {}) => ({
  config,
  nudger,
  now: () => clock,
  owner,
  log: (_f: Record<string, unknown>, m: string) => void logs.push(m),
  ...over,
});

async function send(owner: string, c: Omit<NewCommand, "payload"> & { payload?: Record<string, unknown> }) {
  return withTransaction(t.db, (ctx) => enqueueCommand(ctx, { payload: {}, ...c }, depsOf(owner)));
}

/**
 * What the integration queue's channel hears, and a marker: once the marker sent after a send is
 * heard, every nudge that send made has been heard before it.
 */
async function listenForNudges() {
  const listener = new pg.Client({ connectionString: t.url });
  await listener.connect();
  const heard: string[] = [];
  listener.on("notification", (n) => heard.push(n.payload === "marker" ? "marker" : n.channel));
  await listener.query("LISTEN rhumbatron_queue_integration");
  const marker = async () => {
    const before = heard.filter((h) => h === "marker").length;
    await t.db.$executeRaw`SELECT pg_notify('rhumbatron_queue_integration', 'marker')`;
    await waitFor("the marker notification", () => heard.filter((h) => h === "marker").length > before);
  };
  return { listener, heard, marker };
}

/** A handler whose effect is a counted row, written in the batch's transaction; `calls` counts runs. */
function counting(types: string[], behave: (commandId: string) => "done" | "more" | "throw" = () => "done") {
  const calls = new Map<string, number>();
  const handler: CommandHandler = {
    commandTypes: types,
    async handle(ctx) {
      const id = ctx.command.commandId;
      calls.set(id, (calls.get(id) ?? 0) + 1);
      await ctx.tx.usageCounter.upsert({
        where: { counter_scopeId_window: { counter: "effect", scopeId: id, window: "-" } },
        create: { counter: "effect", scopeId: id, window: "-", count: 1 },
        update: { count: { increment: 1 } },
      });
      const b = behave(id);
      if (b === "throw") throw new Error(`handler failed for ${id}`);
      return b;
    },
  };
  return { handler, calls };
}
const effects = async (ids: string[]) =>
  Promise.all(
    ids.map(
      async (id) =>
        (
          await t.db.usageCounter.findUnique({
            where: { counter_scopeId_window: { counter: "effect", scopeId: id, window: "-" } },
          })
        )?.count ?? 0,
    ),
  );
const onQueue = (queue: string) =>
  t.db.queueMessage.findMany({ where: { queue }, orderBy: { id: "asc" } }).then((ms) => ms.map((m) => m.commandId));

/** The database, except that every transaction dies after its work and before its COMMIT. */
function crashingBeforeCommit(db: Db): Db {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== "$transaction") {
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return (fn: (tx: unknown) => Promise<unknown>, options: unknown) =>
        target.$transaction(
          async (tx) => {
            await fn(tx);
            throw new Error("consumer killed before COMMIT");
          },
          options as Parameters<Db["$transaction"]>[1],
        );
    },
  });
}

describe("queue batches", () => {
  it("acks the rest of a batch when some handlers throw; each failure is retried on its own, its handler run once", async () => {
    await seedProjects(t.db, ["proj_b1"]);
    const ids = ["cmd_f1", "cmd_f2", "cmd_f3", "cmd_f4", "cmd_f5"];
    for (const id of ids) await send("b1", { commandId: id, commandType: "project.provision", projectId: "proj_b1" });
    let failing = new Set(["cmd_f1", "cmd_f4"]);
    const { handler, calls } = counting(["project.provision"], (id) => (failing.has(id) ? "throw" : "done"));
    const deps = depsOf("consumer-b1");
    const r = await consumeQueue(t.db, "integration", [handler], deps);
    expect(r).toMatchObject({ leased: 5, actions: { ack: 3, retry: 2 } });
    expect(await effects(ids)).toEqual([0, 1, 1, 0, 1]);
    expect([calls.get("cmd_f1"), calls.get("cmd_f4")]).toEqual([1, 1]);
    const retried = await t.db.queueMessage.findMany({ where: { queue: "integration" }, orderBy: { id: "asc" } });
    expect(retried.map((m) => m.commandId)).toEqual(["cmd_f1", "cmd_f4"]);
    for (const m of retried) {
      expect(m).toMatchObject({
        deliveries: 1,
        leaseOwner: null,
        leasedUntil: null,
        lastError: `handler failed for ${m.commandId}`,
        availableAt: new Date(clock.getTime() + config.queues.policies.integration.retryDelaySeconds * 1000),
      });
    }
    // Not before the retry delay; then both succeed and nothing else runs again.
    expect((await consumeQueue(t.db, "integration", [handler], deps)).leased).toBe(0);
    advance(config.queues.policies.integration.retryDelaySeconds);
    failing = new Set();
    expect(await consumeQueue(t.db, "integration", [handler], deps)).toMatchObject({ leased: 2, actions: { ack: 2 } });
    expect(await effects(ids)).toEqual([1, 1, 1, 1, 1]);
    expect(await onQueue("integration")).toEqual([]);
  });

  it("a batch redelivered after its consumer died between the handlers and the ack applies each command once", async () => {
    await seedProjects(t.db, ["proj_b2"]);
    const ids = ["cmd_k1", "cmd_k2", "cmd_k3", "cmd_k4"];
    for (const id of ids) await send("b2", { commandId: id, commandType: "project.provision", projectId: "proj_b2" });
    // One of them throws too, so the batch is also run again with savepoints before it dies.
    const { handler } = counting(["project.provision"], (id) => (id === "cmd_k2" ? "throw" : "done"));
    const a = depsOf("consumer-b2a");
    await expect(consumeQueue(crashingBeforeCommit(t.db), "integration", [handler], a)).rejects.toThrow(
      "consumer killed before COMMIT",
    );
    expect(await effects(ids)).toEqual([0, 0, 0, 0]);
    expect(await onQueue("integration")).toEqual(ids);
    // Leased: nobody takes them until the lease runs out.
    const b = depsOf("consumer-b2b");
    const ok = counting(["project.provision"]);
    expect((await consumeQueue(t.db, "integration", [ok.handler], b)).leased).toBe(0);
    advance(config.queues.leaseSeconds + 1);
    expect(await consumeQueue(t.db, "integration", [ok.handler], b)).toMatchObject({ leased: 4, actions: { ack: 4 } });
    expect(await effects(ids)).toEqual([1, 1, 1, 1]);
    // The second delivery is counted as one.
    expect((await consumeQueue(t.db, "integration", [ok.handler], b)).leased).toBe(0);
    expect(await onQueue("integration")).toEqual([]);
  });

  it("a consumer that beats takes its own crashed batch again after the takeover wait, each effect once", async () => {
    await seedProjects(t.db, ["proj_b3"]);
    const ids = ["cmd_o1", "cmd_o2", "cmd_o3"];
    for (const id of ids) await send("b3", { commandId: id, commandType: "project.provision", projectId: "proj_b3" });
    const beat = (workerId: string) =>
      recordBeat(
        t.db,
        {
          workerId,
          executor: "local",
          hostname: "host-b3",
          pid: workerId === "wrk_b3" ? 3001 : 3002,
          version: "0.1.0",
          startedAt: clock,
          sandboxKind: null,
          sandboxIsolates: null,
          sandboxNote: null,
        },
        clock,
      );
    await beat("wrk_b3");
    await beat("wrk_b3_other");
    const { handler } = counting(["project.provision"]);
    const mine = depsOf("wrk_b3");
    await expect(consumeQueue(crashingBeforeCommit(t.db), "integration", [handler], mine)).rejects.toThrow();
    expect(await effects(ids)).toEqual([0, 0, 0]);
    // Not at once (a failure that repeats is retried at the takeover pace), and never by the other
    // live worker while the lease runs.
    advance(1);
    expect((await consumeQueue(t.db, "integration", [handler], mine)).leased).toBe(0);
    advance(config.worker.takeoverSeconds);
    await beat("wrk_b3");
    await beat("wrk_b3_other");
    expect((await consumeQueue(t.db, "integration", [handler], depsOf("wrk_b3_other"))).leased).toBe(0);
    expect(await consumeQueue(t.db, "integration", [handler], mine)).toMatchObject({ leased: 3, actions: { ack: 3 } });
    expect(await effects(ids)).toEqual([1, 1, 1]);
  });

  it("leaves a message another delivery took meanwhile to it: nothing of this one commits for it, the rest acks", async () => {
    await seedProjects(t.db, ["proj_b9"]);
    const ids = ["cmd_l1", "cmd_l2", "cmd_l3", "cmd_l4"];
    for (const id of ids.slice(0, 3)) {
      await send("b9", { commandId: id, commandType: "project.provision", projectId: "proj_b9" });
    }
    await send("b9", { commandId: "cmd_l4", commandType: "project.cleanup", projectId: "proj_b9" });
    // While this delivery runs, another consumer leases cmd_l2 and cmd_l4 (as after this
    // consumer's lease ran out).
    const takeOver = (id: string) =>
      t.db.$executeRaw`UPDATE queue_messages SET lease_owner = 'consumer-b9b', deliveries = deliveries + 1
        WHERE command_id = ${id}`;
    const { handler } = counting(["project.provision"]);
    const shared: CommandHandler = {
      ...handler,
      async handle(ctx) {
        if (ctx.command.commandId === "cmd_l2" && ctx.message.deliveries === 1) await takeOver("cmd_l2");
        return handler.handle(ctx);
      },
    };
    const own: CommandHandler = {
      commandTypes: ["project.cleanup"],
      async prepare() {
        await takeOver("cmd_l4");
      },
      async handle(ctx) {
        await ctx.tx.usageCounter.create({ data: { counter: "effect", scopeId: "cmd_l4", window: "-", count: 1 } });
        return "done";
      },
    };
    logs.length = 0;
    const r = await consumeQueue(t.db, "integration", [shared, own], depsOf("consumer-b9a"));
    expect(r).toMatchObject({ leased: 4, actions: { ack: 2, retry: 0 } });
    expect(await effects(ids)).toEqual([1, 0, 1, 0]);
    expect(
      await t.db.queueMessage.findMany({
        where: { queue: "integration" },
        orderBy: { id: "asc" },
        select: { commandId: true, leaseOwner: true, deliveries: true },
      }),
    ).toEqual([
      { commandId: "cmd_l2", leaseOwner: "consumer-b9b", deliveries: 2 },
      { commandId: "cmd_l4", leaseOwner: "consumer-b9b", deliveries: 2 },
    ]);
    expect(logs.filter((l) => l.startsWith("lease lost on queue message"))).toHaveLength(2);
    await t.db.queueMessage.deleteMany({});
  });

  it("exhausts a batch's failing messages to the dead-letter queue together, each there once", async () => {
    await seedProjects(t.db, ["proj_b4"]);
    for (const id of ["cmd_x1", "cmd_x2", "cmd_x3"]) {
      await send("b4", { commandId: id, commandType: "project.provision", projectId: "proj_b4" });
    }
    // An unknown type in the same batch skips its retries.
    await send("b4", { commandId: "cmd_x4", commandType: "project.cleanup", projectId: "proj_b4" });
    // cmd_x3 is on the dead-letter queue already (an earlier failure not yet recorded).
    await t.db.queueMessage.create({
      data: {
        queue: "dead-letter",
        commandId: "cmd_x3",
        commandType: "project.provision",
        envelope: {},
        originQueue: "integration",
        lastError: "earlier",
        expiresAt: new Date(clock.getTime() + 86_400_000),
      },
    });
    const poison = new Set(["cmd_x1", "cmd_x3"]);
    const { handler, calls } = counting(["project.provision"], (id) => (poison.has(id) ? "throw" : "done"));
    const deps = depsOf("consumer-b4");
    nudges.length = 0;
    logs.length = 0;
    const rounds: Record<string, number>[] = [];
    for (let i = 0; i <= config.queues.policies.integration.maxRetries; i++) {
      const r = await consumeQueue(t.db, "integration", [handler], deps);
      rounds.push(Object.fromEntries(Object.entries(r.actions).filter(([, n]) => n > 0)));
      advance(config.queues.policies.integration.retryDelaySeconds);
    }
    expect(rounds).toEqual([{ ack: 1, retry: 2, dead_letter: 1 }, { retry: 2 }, { retry: 2 }, { dead_letter: 2 }]);
    expect([calls.get("cmd_x1"), calls.get("cmd_x3")]).toEqual([4, 4]);
    expect(await effects(["cmd_x1", "cmd_x2", "cmd_x3"])).toEqual([0, 1, 0]);
    expect(await onQueue("integration")).toEqual([]);
    const dead = await t.db.queueMessage.findMany({ where: { queue: "dead-letter" }, orderBy: { commandId: "asc" } });
    expect(dead.map((m) => [m.commandId, m.originQueue, m.lastError, m.deliveries])).toEqual([
      ["cmd_x1", "integration", "handler failed for cmd_x1", 0],
      ["cmd_x3", "integration", "earlier", 0],
      ["cmd_x4", "integration", "unknown command type project.cleanup on integration", 0],
    ]);
    const x1 = dead.find((m) => m.commandId === "cmd_x1");
    expect(x1?.envelope).toMatchObject({ commandId: "cmd_x1", commandType: "project.provision", projectId: "proj_b4" });
    expect(x1?.expiresAt.getTime()).toBeGreaterThan(clock.getTime());
    expect(logs.filter((l) => l === "command dead-lettered")).toHaveLength(3);
    expect(nudges.filter((n) => n === "queue_dead_letter")).toHaveLength(2);
    await t.db.queueMessage.deleteMany({});
  });

  it("redelivers bounded work of a batch at once and defers what is left after its last delivery", async () => {
    await seedProjects(t.db, ["proj_b5"]);
    for (const id of ["cmd_s1", "cmd_s2"]) {
      await send("b5", { commandId: id, commandType: "forks.sweep", projectId: "proj_b5" });
    }
    await send("b5", { commandId: "cmd_s3", commandType: "project.provision", projectId: "proj_b5" });
    // cmd_s2 was deferred once before: its row is kept, with the envelope of this time.
    await t.db.deferredCommand.create({ data: { commandId: "cmd_s2", queue: "integration", envelope: { old: true } } });
    const { handler } = counting(["forks.sweep", "project.provision"], (id) => (id === "cmd_s3" ? "done" : "more"));
    const deps = depsOf("consumer-b5");
    nudges.length = 0;
    const rounds: Record<string, number>[] = [];
    for (let i = 0; i < config.integration.maxDeliveriesPerCommand; i++) {
      const r = await consumeQueue(t.db, "integration", [handler], deps);
      rounds.push(Object.fromEntries(Object.entries(r.actions).filter(([, n]) => n > 0)));
    }
    expect(rounds).toEqual([{ ack: 1, redeliver: 2 }, { redeliver: 2 }, { redeliver: 2 }, { ack_and_defer: 2 }]);
    // One nudge per batch that redelivered, not one per message.
    expect(nudges.filter((n) => n === "queue_integration")).toHaveLength(3);
    expect(await effects(["cmd_s1", "cmd_s2", "cmd_s3"])).toEqual([4, 4, 1]);
    expect(await onQueue("integration")).toEqual([]);
    const deferred = await t.db.deferredCommand.findMany({ orderBy: { commandId: "asc" } });
    expect(deferred.map((d) => [d.commandId, d.queue, (d.envelope as { commandId?: string }).commandId])).toEqual([
      ["cmd_s1", "integration", "cmd_s1"],
      ["cmd_s2", "integration", "cmd_s2"],
    ]);
    await t.db.deferredCommand.deleteMany({});
  });

  it("records an exhausted failure through its handler on a record-failure queue, inside the batch", async () => {
    await seedProjects(t.db, ["proj_b6"]);
    const batched = loadConfig("dev", { queues: { policies: { indexing: { batchSize: 3 } } } });
    const deps = depsOf("consumer-b6", { config: batched });
    for (const g of [1, 2]) {
      await withTransaction(t.db, (ctx) =>
        enqueueCommand(
          ctx,
          { commandId: `cmd_i${g}`, commandType: "index.build", projectId: "proj_b6", payload: { generation: g } },
          deps,
        ),
      );
    }
    const { handler } = counting(["index.build"], (id) => (id === "cmd_i1" ? "throw" : "done"));
    handler.onExhausted = async (ctx, m, error) => {
      await ctx.tx.usageCounter.create({ data: { counter: "failure", scopeId: m.commandId, window: error, count: 1 } });
    };
    logs.length = 0;
    const seen: Record<string, number>[] = [];
    for (let i = 0; i <= batched.queues.policies.indexing.maxRetries; i++) {
      const r = await consumeQueue(t.db, "indexing", [handler], deps);
      seen.push(Object.fromEntries(Object.entries(r.actions).filter(([, n]) => n > 0)));
      advance(batched.queues.policies.indexing.retryDelaySeconds);
    }
    expect(seen).toEqual([{ ack: 1, retry: 1 }, { retry: 1 }, { retry: 1 }, { record_failure: 1 }]);
    expect(await t.db.usageCounter.findMany({ where: { counter: "failure" } })).toMatchObject([
      { scopeId: "cmd_i1", window: "handler failed for cmd_i1", count: 1 },
    ]);
    expect(await effects(["cmd_i1", "cmd_i2"])).toEqual([0, 1]);
    expect(await onQueue("indexing")).toEqual([]);
    expect(logs).toContain("command failed; failure recorded");
  });

  it("runs handlers with their own transaction one by one after the batch, each settled on its own", async () => {
    await seedProjects(t.db, ["proj_b7"]);
    for (const id of ["cmd_p1", "cmd_p2", "cmd_p3"]) {
      await send("b7", { commandId: id, commandType: "project.provision", projectId: "proj_b7" });
    }
    await send("b7", { commandId: "cmd_p4", commandType: "project.cleanup", projectId: "proj_b7" });
    const order: string[] = [];
    const shared = counting(["project.provision"]);
    const own: CommandHandler = {
      commandTypes: ["project.cleanup"],
      async prepare({ command }) {
        order.push(`prepare ${command.commandId}`);
        return 7;
      },
      async handle(ctx) {
        order.push(`handle ${ctx.command.commandId} ${String(ctx.prepared)}`);
        return "done";
      },
    };
    const sharedFirst: CommandHandler = {
      ...shared.handler,
      handle: async (ctx) => {
        order.push(`handle ${ctx.command.commandId}`);
        if (ctx.command.commandId === "cmd_p2") throw new Error("p2 failed");
        return shared.handler.handle(ctx);
      },
    };
    const r = await consumeQueue(t.db, "integration", [sharedFirst, own], depsOf("consumer-b7"));
    expect(r).toMatchObject({ leased: 4, actions: { ack: 3, retry: 1 } });
    // The shared batch (run again with savepoints after cmd_p2 threw, cmd_p2 itself not again),
    // then the message with its own transaction.
    expect(order).toEqual([
      "handle cmd_p1",
      "handle cmd_p2",
      "handle cmd_p1",
      "handle cmd_p3",
      "prepare cmd_p4",
      "handle cmd_p4 7",
    ]);
    expect(await onQueue("integration")).toEqual(["cmd_p2"]);
    await t.db.queueMessage.deleteMany({});
  });

  it("with the Postgres nudger: a send nudges its queue on commit only, a duplicate sends and nudges nothing", async () => {
    await seedProjects(t.db, ["proj_b8"]);
    await seedChange(t.db, "proj_b8", "chg_b8");
    const { listener, heard, marker } = await listenForNudges();
    try {
      const deps = depsOf("b8", { nudger: pgNotifyNudger });
      const cmd = { commandType: "change.dispatch" as const, projectId: "proj_b8", changeId: "chg_b8", payload: {} };
      await withTransaction(t.db, async (ctx) => {
        await enqueueCommand(ctx, { ...cmd, commandId: "cmd_n_rolled" }, deps);
        throw new Error("the state change failed");
      }).catch(() => {});
      const first = await withTransaction(t.db, (ctx) => enqueueCommand(ctx, { ...cmd, commandId: "cmd_n1" }, deps));
      expect(first).toMatchObject({ sent: true, duplicate: false });
      await marker();
      // The rolled-back send nudged nothing; the committed one once, before the marker.
      expect(heard).toEqual(["rhumbatron_queue_integration", "marker"]);
      const again = await withTransaction(t.db, (ctx) => enqueueCommand(ctx, { ...cmd, commandId: "cmd_n1" }, deps));
      expect(again).toMatchObject({ sent: true, duplicate: true });
      await marker();
      expect(heard).toEqual(["rhumbatron_queue_integration", "marker", "marker"]);
      expect(await onQueue("integration")).toEqual(["cmd_n1"]);
      // The duplicate was not counted against the Change's daily cap.
      expect(await t.db.usageCounter.findMany({ where: { scopeId: "chg_b8" } })).toMatchObject([{ count: 1 }]);
    } finally {
      await listener.end();
      await t.db.queueMessage.deleteMany({});
    }
  });

  it("sendCommand, with no state change: one statement sends and nudges, a duplicate nothing, a bad payload is refused", async () => {
    await seedProjects(t.db, ["proj_b10"]);
    await seedChange(t.db, "proj_b10", "chg_b10");
    const { listener, heard, marker } = await listenForNudges();
    try {
      const deps = depsOf("b10", { nudger: pgNotifyNudger });
      const cmd = { commandType: "project.provision" as const, projectId: "proj_b10", payload: {} };
      expect(await sendCommand(t.db, { ...cmd, commandId: "cmd_s1" }, deps)).toMatchObject({
        sent: true,
        duplicate: false,
        queue: "integration",
      });
      await marker();
      expect(heard).toEqual(["rhumbatron_queue_integration", "marker"]);
      expect(await sendCommand(t.db, { ...cmd, commandId: "cmd_s1" }, deps)).toMatchObject({ duplicate: true });
      await marker();
      expect(heard).toEqual(["rhumbatron_queue_integration", "marker", "marker"]);
      // Validated like every send: an unknown type or a payload the catalogue refuses changes nothing.
      await expect(
        sendCommand(t.db, { ...cmd, commandType: "no.such" as never, commandId: "cmd_s2" }, deps),
      ).rejects.toMatchObject({ code: "INVALID_INPUT" });
      // A Change's command is counted against its cap, in a transaction of its own.
      const dispatch = { commandType: "change.dispatch" as const, projectId: "proj_b10", changeId: "chg_b10" };
      expect(await sendCommand(t.db, { ...dispatch, commandId: "cmd_s3", payload: {} }, deps)).toMatchObject({
        sent: true,
        duplicate: false,
      });
      expect(await t.db.usageCounter.findMany({ where: { scopeId: "chg_b10" } })).toMatchObject([{ count: 1 }]);
      expect((await onQueue("integration")).sort()).toEqual(["cmd_s1", "cmd_s3"]);
    } finally {
      await listener.end();
      await t.db.queueMessage.deleteMany({});
    }
  });
});
