import { loadConfig, streamIndex } from "@rhumbatron/core";
import { analyticsSubscription, projectorSubscription } from "@rhumbatron/db";
import { seedChange, seedProjects, testEvent, useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import type { Nudger } from "../nudge.ts";
import { withTransaction } from "../transaction.ts";
import { consumeOnce, type DeliveredEvent, type Subscription } from "./consumer.ts";
import { appendToOutbox } from "./outbox.ts";
import { publishProject } from "./publisher.ts";
import { postgresStreamSink } from "./stream.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
const noNudge: Nudger = { nudge: async () => {} };
let clock = new Date("2026-04-01T00:00:00Z");
const deps = { config, now: () => clock, owner: "test-consumer" };

/** Writes events for a project through the outbox and publishes them to its stream. */
async function publish(projectId: string, changeId: string, keys: string[]): Promise<number> {
  await seedProjects(t.db, [projectId]);
  await seedChange(t.db, projectId, changeId);
  await withTransaction(t.db, (ctx) =>
    appendToOutbox(
      ctx,
      keys.map((k) => testEvent("task.failed", { projectId, changeId, taskId: k, payload: { reason: k } })),
      { config, nudger: noNudge },
    ),
  );
  await publishProject(t.db, projectId, { config, sink: postgresStreamSink, nudger: noNudge, now: () => clock });
  return streamIndex(projectId, config.streams.count);
}

function recording(name: string, opts: { failWhen?: () => boolean } = {}) {
  const applied: string[] = [];
  const sub: Subscription = {
    name,
    group: (events) => (events.length ? [events] : []),
    async apply(ctx, events: DeliveredEvent[]) {
      // Write inside the claiming transaction, then maybe crash: the claim must roll back with it.
      await ctx.tx.$executeRaw`SELECT 1`;
      if (opts.failWhen?.()) throw new Error("consumer crashed after claiming");
      applied.push(...events.map((e) => e.event.taskId ?? ""));
    },
  };
  return { sub, applied };
}

describe("stream consumers", () => {
  it("applies a batch delivered twice only once", async () => {
    const stream = await publish("proj_c1", "chg_c1", ["a", "b", "c"]);
    const { sub, applied } = recording("dup-test");
    expect(await consumeOnce(t.db, sub, stream, deps)).toMatchObject({ outcome: "ack", applied: 3 });
    // Redeliver the same batch (at least once delivery): rewind the cursor.
    await t.db.streamCursor.update({
      where: { subscription_streamIndex: { subscription: "dup-test", streamIndex: stream } },
      data: { committedOffset: 0 },
    });
    expect(await consumeOnce(t.db, sub, stream, deps)).toMatchObject({ outcome: "ack", applied: 0, duplicates: 3 });
    expect(applied).toEqual(["a", "b", "c"]);
  });

  it("redelivers after a crash between claim and apply, and applies exactly once", async () => {
    const stream = await publish("proj_c2", "chg_c2", ["x"]);
    let crash = true;
    const { sub, applied } = recording("crash-test", { failWhen: () => crash });
    const first = await consumeOnce(t.db, sub, stream, deps);
    expect(first).toMatchObject({ outcome: "nack", failures: 1, error: "consumer crashed after claiming" });
    expect(await t.db.processedEvent.count({ where: { consumer: "crash-test" } })).toBe(0);
    // Held back until the nack delay has passed.
    expect((await consumeOnce(t.db, sub, stream, deps)).outcome).toBe("held");
    clock = new Date(clock.getTime() + config.eventRouter.nackDelaySeconds * 1000);
    crash = false;
    expect(await consumeOnce(t.db, sub, stream, deps)).toMatchObject({ outcome: "ack" });
    expect(applied.filter((k) => k === "x")).toEqual(["x"]);
    expect(await t.db.batchFailure.count({ where: { consumer: "crash-test" } })).toBe(0);
  });

  it("nacks a poison batch 4 times, then dead-letters it on the 5th, marks it processed and acks", async () => {
    const stream = await publish("proj_c3", "chg_c3", ["p1", "p2"]);
    const { sub, applied } = recording("poison-test", { failWhen: () => true });
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) {
      outcomes.push((await consumeOnce(t.db, sub, stream, deps)).outcome);
      clock = new Date(clock.getTime() + config.eventRouter.nackDelaySeconds * 1000);
    }
    expect(outcomes).toEqual(["nack", "nack", "nack", "nack", "dead_letter"]);
    expect(applied).toEqual([]);
    const dl = await t.db.deadLetter.findFirstOrThrow({ where: { consumer: "poison-test", kind: "batch" } });
    expect(dl.reason).toBe("batch failed 5 times: consumer crashed after claiming");
    expect(dl.attempts).toBe(5);
    expect((dl.payload as { eventIds: string[] }).eventIds).toHaveLength(2);
    expect(await t.db.processedEvent.count({ where: { consumer: "poison-test" } })).toBe(2);
    // Acked: the next delivery finds nothing more.
    expect((await consumeOnce(t.db, sub, stream, deps)).outcome).toBe("empty");
  });

  it("lets one consumer at a time hold a (subscription, stream), and takes over an expired lease", async () => {
    const stream = await publish("proj_c4", "chg_c4", ["l"]);
    const { sub } = recording("lease-test");
    await t.db.streamCursor.create({
      data: {
        subscription: "lease-test",
        streamIndex: stream,
        leaseOwner: "other",
        leasedUntil: new Date(clock.getTime() + 10_000),
      },
    });
    expect((await consumeOnce(t.db, sub, stream, deps)).outcome).toBe("busy");
    clock = new Date(clock.getTime() + 11_000);
    expect((await consumeOnce(t.db, sub, stream, deps)).outcome).toBe("ack");
  });

  it("sets an undecodable event aside as a dead letter without holding up the batch", async () => {
    const stream = await publish("proj_c5", "chg_c5", ["good1"]);
    const head = await t.db.streamHead.findUniqueOrThrow({ where: { streamIndex: stream } });
    await t.db.streamHead.update({ where: { streamIndex: stream }, data: { lastOffset: head.lastOffset + 1n } });
    await t.db.streamEntry.create({
      data: {
        streamIndex: stream,
        offset: head.lastOffset + 1n,
        eventId: "evt_bad",
        projectId: "proj_c5",
        eventType: "task.exploded",
        envelope: { eventId: "evt_bad", eventType: "task.exploded" },
        publishedAt: clock,
      },
    });
    const { sub } = recording("decode-test");
    const r = await consumeOnce(t.db, sub, stream, deps);
    expect(r).toMatchObject({ outcome: "ack", undecodable: 1 });
    const dl = await t.db.deadLetter.findFirstOrThrow({ where: { consumer: "decode-test", kind: "event" } });
    expect(dl.reason).toMatch(/^malformed_envelope/);
  });
});

describe("project-view-projector", () => {
  it("keeps counts by state and the feed, idempotently, with at most 15 apply calls per delivery", async () => {
    const projects = Array.from({ length: 400 }, (_, i) => `proj_v${i}`);
    const onStream = projects.filter((p) => streamIndex(p, 8) === streamIndex("proj_v0", 8)).slice(0, 17);
    expect(onStream.length).toBe(17);
    for (const p of onStream) {
      await seedProjects(t.db, [p]);
      await seedChange(t.db, p, `chg_${p}`);
      await withTransaction(t.db, (ctx) =>
        appendToOutbox(
          ctx,
          [
            testEvent("change.created", {
              projectId: p,
              changeId: `chg_${p}`,
              payload: { title: "t", riskTier: "low", clientRequestId: "r", taskIds: ["t1", "t2"] },
            }),
            testEvent("task.ready", { projectId: p, changeId: `chg_${p}`, taskId: "t1", payload: { key: "t1" } }),
          ],
          { config, nudger: noNudge },
        ),
      );
      await publishProject(t.db, p, { config, sink: postgresStreamSink, nudger: noNudge, now: () => clock });
    }
    const stream = streamIndex("proj_v0", 8);
    const calls: number[] = [];
    const sub = projectorSubscription(config, { beforeApply: (e) => calls.push(e.length) });
    const first = await consumeOnce(t.db, sub, stream, deps);
    expect(first.outcome).toBe("ack");
    expect(calls).toHaveLength(15);
    expect(first.deferred).toBe(4);
    const second = await consumeOnce(t.db, sub, stream, deps);
    expect(calls).toHaveLength(17);
    expect(second.applied).toBe(4);
    const view = await t.db.projectView.findUniqueOrThrow({ where: { projectId: onStream[0] as string } });
    expect(view).toMatchObject({
      changesTotal: 1,
      tasksByState: { pending: 1, ready: 1 },
      eventCount: 2,
      lastEventType: "task.ready",
    });
    const feed = await t.db.projectEvent.findMany({
      where: { projectId: onStream[0] as string },
      orderBy: { id: "asc" },
    });
    expect(feed.map((f) => f.summary)).toEqual(['Change "t" created (low risk, 2 tasks)', "Task t1 is ready"]);
    // A replay of the stream changes nothing.
    await t.db.streamCursor.updateMany({
      where: { subscription: "project-view-projector" },
      data: { committedOffset: 0 },
    });
    await consumeOnce(t.db, sub, stream, deps);
    await consumeOnce(t.db, sub, stream, deps);
    expect(await t.db.projectView.findUniqueOrThrow({ where: { projectId: onStream[0] as string } })).toMatchObject({
      eventCount: 2,
    });

    const analytics = analyticsSubscription(config);
    expect((await consumeOnce(t.db, analytics, stream, deps)).outcome).toBe("ack");
    const points = await t.db.metricPoint.groupBy({
      by: ["name"],
      _count: true,
      where: { dataset: "rhumbatron_event_metrics_dev" },
    });
    expect(Object.fromEntries(points.map((p) => [p.name, p._count]))).toMatchObject({
      change_created: 17,
      task_ready: 17,
    });
  });
});
