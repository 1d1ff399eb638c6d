import { loadConfig, streamIndex } from "@rhumbatron/core";
import {
  blockStreamOffset,
  seedChange,
  seedProjects,
  testEvent,
  useTestDatabase,
  waitFor,
} from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import type { Nudger } from "../nudge.ts";
import { withTransaction } from "../transaction.ts";
import { appendToOutbox } from "./outbox.ts";
import { publishDue, publishProject } from "./publisher.ts";
import { postgresStreamSink, type StreamSink } from "./stream.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
const noNudge: Nudger = { nudge: async () => {} };
const t0 = new Date("2026-03-01T00:00:00Z");

function failingSink(shouldFail: () => boolean): StreamSink {
  return {
    append: (tx, stream, records, now) =>
      shouldFail()
        ? Promise.reject(new Error("stream store unavailable"))
        : postgresStreamSink.append(tx, stream, records, now),
  };
}

async function write(projectId: string, changeId: string, keys: string[]) {
  await withTransaction(t.db, (ctx) =>
    appendToOutbox(
      ctx,
      keys.map((k) => testEvent("task.failed", { projectId, changeId, taskId: k, payload: { reason: k } })),
      { config, nudger: noNudge },
    ),
  );
}

async function streamOrder(projectId: string): Promise<string[]> {
  const rows = await t.db.streamEntry.findMany({ where: { projectId }, orderBy: { offset: "asc" } });
  return rows.map((r) => (r.envelope as { payload: { reason: string } }).payload.reason);
}

/** A project id off stream 0: configured with one stream, only stream 0 has a producer binding, so it has none. */
function projectOffStreamZero(prefix: string): string {
  let pid = `${prefix}0`;
  for (let i = 0; streamIndex(pid, 8) === 0; i++) pid = `${prefix}${i}`;
  return pid;
}

/** A project id on the same stream as `a`, so that two projects' rows race for one stream's offsets. */
function projectOnStreamOf(a: string, prefix: string): string {
  let b = `${prefix}0`;
  for (let i = 1; streamIndex(b, 8) !== streamIndex(a, 8); i++) b = `${prefix}${i}`;
  return b;
}

/**
 * Four concurrent writers, two on each project, committing five rows at a time. Each row's reason
 * is `w<writer>-<number>`, so that each writer's own order can be read back off the stream.
 */
async function writeConcurrently(
  a: { projectId: string; changeId: string },
  b: { projectId: string; changeId: string },
  perWriter: number,
): Promise<void> {
  await Promise.all(
    [0, 1, 2, 3].map(async (w) => {
      const { projectId, changeId } = w % 2 === 0 ? a : b;
      for (let i = 0; i < perWriter; i += 5) {
        await write(
          projectId,
          changeId,
          [0, 1, 2, 3, 4].map((k) => `w${w}-${String(i + k).padStart(4, "0")}`),
        );
      }
    }),
  );
}

/** The outbox sequence of each of a project's stream entries, in stream order; -1 where the outbox has no such row. */
async function outboxSeqsInStreamOrder(
  projectId: string,
  entries: { projectId: string; eventId: string }[],
): Promise<bigint[]> {
  const rows = await t.db.outboxRow.findMany({ where: { projectId }, select: { eventId: true, projectSeq: true } });
  const seqOf = new Map(rows.map((r) => [r.eventId, r.projectSeq]));
  return entries.filter((e) => e.projectId === projectId).map((e) => seqOf.get(e.eventId) ?? -1n);
}

describe("the publisher", () => {
  it("sends rows in commit order with gap-free offsets, marks them published and nudges the router and analytics", async () => {
    await seedProjects(t.db, ["proj_p1"]);
    await seedChange(t.db, "proj_p1", "chg_p1");
    await write("proj_p1", "chg_p1", ["a", "b"]);
    await write("proj_p1", "chg_p1", ["c"]);
    const channels: string[] = [];
    const nudger: Nudger = { nudge: async (_ctx, ch, payload) => void channels.push(`${ch}:${payload}`) };
    const r = await publishProject(t.db, "proj_p1", { config, sink: postgresStreamSink, nudger, now: () => t0 });
    expect(r).toMatchObject({ published: 3, failedSend: false, heldBack: false });
    expect(await streamOrder("proj_p1")).toEqual(["a", "b", "c"]);
    const stream = streamIndex("proj_p1", 8);
    const offsets = (
      await t.db.streamEntry.findMany({ where: { streamIndex: stream }, orderBy: { offset: "asc" } })
    ).map((e) => Number(e.offset));
    expect(offsets).toEqual(offsets.map((_, i) => (offsets[0] as number) + i));
    expect(await t.db.outboxRow.count({ where: { projectId: "proj_p1", state: "published" } })).toBe(3);
    expect(channels).toEqual([`event_router:${stream}`, `analytics:${stream}`]);
    // Nothing left: a second run publishes nothing.
    expect(
      (await publishProject(t.db, "proj_p1", { config, sink: postgresStreamSink, nudger, now: () => t0 })).published,
    ).toBe(0);
  });

  it("sends at most 100 rows per project per run", async () => {
    await seedProjects(t.db, ["proj_p2"]);
    await seedChange(t.db, "proj_p2", "chg_p2");
    await write(
      "proj_p2",
      "chg_p2",
      Array.from({ length: 130 }, (_, i) => `r${i}`),
    );
    const deps = { config, sink: postgresStreamSink, nudger: noNudge, now: () => t0 };
    expect((await publishProject(t.db, "proj_p2", deps)).published).toBe(100);
    expect((await publishProject(t.db, "proj_p2", deps)).published).toBe(30);
  });

  it("backs off 1, 2, 4 … s with last_error, holds later rows back, fails on the 10th attempt, then moves on", async () => {
    await seedProjects(t.db, ["proj_p3"]);
    await seedChange(t.db, "proj_p3", "chg_p3");
    await write("proj_p3", "chg_p3", ["first"]);
    await write("proj_p3", "chg_p3", ["second"]);
    let now = t0;
    const deps = { config, sink: failingSink(() => true), nudger: noNudge, now: () => now };
    const waits: number[] = [];
    for (let attempt = 1; attempt <= 10; attempt++) {
      const r = await publishProject(t.db, "proj_p3", deps);
      expect(r.failedSend).toBe(true);
      const first = await t.db.outboxRow.findFirstOrThrow({
        where: { projectId: "proj_p3" },
        orderBy: { projectSeq: "asc" },
      });
      expect(first.attempts).toBe(attempt);
      expect(first.lastError).toBe("stream store unavailable");
      if (attempt < 10) {
        expect(first.state).toBe("retry_wait");
        const wait = ((first.nextAttemptAt?.getTime() ?? 0) - now.getTime()) / 1000;
        waits.push(wait);
        // Not due yet: the row, and the one behind it, stay put.
        now = new Date(now.getTime() + wait * 1000 - 1);
        expect(await publishProject(t.db, "proj_p3", deps)).toMatchObject({ heldBack: true, published: 0 });
        now = new Date(now.getTime() + 1);
      } else {
        expect(first.state).toBe("failed");
      }
      const second = await t.db.outboxRow.findFirstOrThrow({
        where: { projectId: "proj_p3" },
        orderBy: { projectSeq: "desc" },
      });
      expect(second.state).toBe("pending");
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256]);
    expect(await t.db.streamEntry.count({ where: { projectId: "proj_p3" } })).toBe(0);
    // The failed row is final and visible; the row behind it is no longer held back.
    const ok = await publishProject(t.db, "proj_p3", { ...deps, sink: postgresStreamSink });
    expect(ok.published).toBe(1);
    expect(await streamOrder("proj_p3")).toEqual(["second"]);
  });

  it("fails a row at once when its stream has no producer binding", async () => {
    const pid = projectOffStreamZero("proj_nb");
    await seedProjects(t.db, [pid]);
    await seedChange(t.db, pid, `chg_${pid}`);
    await write(pid, `chg_${pid}`, ["x"]);
    const oneStream = loadConfig("dev", { streams: { count: 1 } });
    const r = await publishProject(t.db, pid, {
      config: oneStream,
      sink: postgresStreamSink,
      nudger: noNudge,
      now: () => t0,
    });
    expect(r).toMatchObject({ published: 0, failedRows: 1 });
    const row = await t.db.outboxRow.findFirstOrThrow({ where: { projectId: pid } });
    expect(row).toMatchObject({ state: "failed", attempts: 0 });
    expect(row.lastError).toMatch(/no producer binding for stream 0\d/);
  });

  it("keeps each project's order on a shared stream under 4 concurrent writers, 2 publishers and send failures", async () => {
    const a = "proj_order_a";
    const b = projectOnStreamOf(a, "proj_order_b");
    await seedProjects(t.db, [a, b]);
    await seedChange(t.db, a, "chg_oa");
    await seedChange(t.db, b, "chg_ob");
    const perWriter = 500;
    let skewMs = 0;
    let sends = 0;
    const deps = {
      config,
      sink: failingSink(() => ++sends % 7 === 0),
      nudger: noNudge,
      now: () => new Date(Date.now() + skewMs),
    };
    let writing = true;
    const writers = writeConcurrently(
      { projectId: a, changeId: "chg_oa" },
      { projectId: b, changeId: "chg_ob" },
      perWriter,
    );
    const publishers = [0, 1].map(async () => {
      while (writing) {
        await publishDue(t.db, deps);
        skewMs += 10_000; // let retries come due quickly
      }
    });
    await writers;
    writing = false;
    await Promise.all(publishers);
    for (let i = 0; i < 50; i++) {
      skewMs += 600_000;
      const r = await publishDue(t.db, deps);
      if (r.published === 0 && (await t.db.outboxRow.count({ where: { state: { not: "published" } } })) === 0) break;
    }
    expect(await t.db.outboxRow.count({ where: { projectId: { in: [a, b] }, state: { not: "published" } } })).toBe(0);
    const stream = streamIndex(a, 8);
    const entries = await t.db.streamEntry.findMany({
      where: { streamIndex: stream, projectId: { in: [a, b] } },
      orderBy: { offset: "asc" },
    });
    expect(entries).toHaveLength(4 * perWriter);
    // Offsets on the stream are gap-free.
    const all = await t.db.streamEntry.findMany({
      where: { streamIndex: stream },
      orderBy: { offset: "asc" },
      select: { offset: true },
    });
    const firstOffset = Number(all[0]?.offset);
    expect(all.map((e) => Number(e.offset))).toEqual(all.map((_, i) => firstOffset + i));
    // Each project's entries follow its commit order (the outbox sequence), and each writer's own order.
    for (const project of [a, b]) {
      const seqs = await outboxSeqsInStreamOrder(project, entries);
      expect(seqs).toEqual([...seqs].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
      for (const w of [0, 1, 2, 3]) {
        const mine = entries
          .filter((e) => e.projectId === project)
          .map((e) => (e.envelope as { payload: { reason: string } }).payload.reason)
          .filter((r) => r.startsWith(`w${w}-`));
        expect(mine).toEqual([...mine].sort());
      }
    }
    expect(sends).toBeGreaterThan(7);
  }, 120_000);
  it("moves a batch in one statement when the sink is the Postgres stream store (append is never called)", async () => {
    await seedProjects(t.db, ["proj_b1", "proj_b2"]);
    await seedChange(t.db, "proj_b1", "chg_b1");
    await seedChange(t.db, "proj_b2", "chg_b2");
    await write("proj_b1", "chg_b1", ["a", "b"]);
    await write("proj_b2", "chg_b2", ["c"]);
    await write("proj_b1", "chg_b1", ["d"]);
    const batchOnly: StreamSink = {
      inStatement: true,
      append: () => Promise.reject(new Error("append must not be called on the batched path")),
    };
    const channels: string[] = [];
    const nudger: Nudger = { nudge: async (_ctx, ch, payload) => void channels.push(`${ch}:${payload}`) };
    const r = await publishDue(t.db, { config, sink: batchOnly, nudger, now: () => t0 });
    expect(r.published).toBe(4);
    expect(r.projects.map((p) => [p.projectId, p.published, p.failedSend])).toEqual([
      ["proj_b1", 3, false],
      ["proj_b2", 1, false],
    ]);
    expect(await streamOrder("proj_b1")).toEqual(["a", "b", "d"]);
    expect(await streamOrder("proj_b2")).toEqual(["c"]);
    const rows = await t.db.outboxRow.findMany({ where: { projectId: { in: ["proj_b1", "proj_b2"] } } });
    expect(rows.every((x) => x.state === "published" && x.publishedAt?.getTime() === t0.getTime())).toBe(true);
    const streams = [...new Set([streamIndex("proj_b1", 8), streamIndex("proj_b2", 8)])];
    expect(channels.sort()).toEqual(streams.flatMap((s) => [`analytics:${s}`, `event_router:${s}`]).sort());
    // A project another publisher holds is skipped, and left for the next run.
    await write("proj_b1", "chg_b1", ["e"]);
    await withTransaction(t.db, async (ctx) => {
      await ctx.tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('outbox:' || ${"proj_b1"}))`;
      const busy = await publishProject(t.db, "proj_b1", { config, sink: batchOnly, nudger, now: () => t0 });
      expect(busy).toMatchObject({ skippedBusy: true, published: 0 });
    });
    expect((await publishProject(t.db, "proj_b1", { config, sink: batchOnly, nudger, now: () => t0 })).published).toBe(
      1,
    );
    expect(await streamOrder("proj_b1")).toEqual(["a", "b", "d", "e"]);
  });

  it("holds a project's batch at a row waiting for its retry and fails rows without a binding", async () => {
    const pid = projectOffStreamZero("proj_bh");
    await seedProjects(t.db, [pid]);
    await seedChange(t.db, pid, `chg_${pid}`);
    await write(pid, `chg_${pid}`, ["first", "second"]);
    const first = await t.db.outboxRow.findFirstOrThrow({ where: { projectId: pid }, orderBy: { projectSeq: "asc" } });
    await t.db.outboxRow.update({
      where: { id: first.id },
      data: { state: "retry_wait", attempts: 1, nextAttemptAt: new Date(t0.getTime() + 1000), lastError: "x" },
    });
    const deps = { config, sink: postgresStreamSink, nudger: noNudge, now: () => t0 };
    expect(await publishProject(t.db, pid, deps)).toMatchObject({ heldBack: true, published: 0 });
    expect(await streamOrder(pid)).toEqual([]);
    const due = { ...deps, now: () => new Date(t0.getTime() + 1000) };
    expect(await publishProject(t.db, pid, due)).toMatchObject({ heldBack: false, published: 2 });
    expect(await streamOrder(pid)).toEqual(["first", "second"]);
    expect(await t.db.outboxRow.findUniqueOrThrow({ where: { id: first.id } })).toMatchObject({
      state: "published",
      attempts: 1,
      nextAttemptAt: null,
    });
    await write(pid, `chg_${pid}`, ["unbound"]);
    const oneStream = loadConfig("dev", { streams: { count: 1 } });
    expect(await publishProject(t.db, pid, { ...deps, config: oneStream })).toMatchObject({
      published: 0,
      failedRows: 1,
    });
    const row = await t.db.outboxRow.findFirstOrThrow({ where: { projectId: pid }, orderBy: { projectSeq: "desc" } });
    expect(row).toMatchObject({ state: "failed", attempts: 0 });
    expect(row.lastError).toMatch(/no producer binding for stream 0\d/);
  });

  it("records a failed batch as a failed send of the project's first row, then recovers", async () => {
    await seedProjects(t.db, ["proj_bf"]);
    await seedChange(t.db, "proj_bf", "chg_bf");
    await write("proj_bf", "chg_bf", ["a", "b"]);
    const stream = streamIndex("proj_bf", 8);
    // The stream store refuses the entries: its next offset is taken already.
    const inTheWay = await blockStreamOffset(t.db, stream);
    // The batch's failure is told (the worker logs it), then the per-project path records it on the row.
    const told: unknown[] = [];
    const deps = {
      config,
      sink: postgresStreamSink,
      nudger: noNudge,
      now: () => t0,
      onBatchFailed: (err: unknown) => told.push(err),
    };
    const r = await publishProject(t.db, "proj_bf", deps);
    expect(r).toMatchObject({ failedSend: true, published: 0 });
    expect(told).toHaveLength(1);
    expect(String(told[0])).toMatch(/unique|constraint/i);
    const rows = await t.db.outboxRow.findMany({ where: { projectId: "proj_bf" }, orderBy: { projectSeq: "asc" } });
    expect(rows.map((x) => [x.state, x.attempts])).toEqual([
      ["retry_wait", 1],
      ["pending", 0],
    ]);
    expect(rows[0]?.lastError).toMatch(/unique|constraint/i);
    expect(await streamOrder("proj_bf")).toEqual([]);
    await inTheWay.free();
    const later = await publishDue(t.db, { ...deps, now: () => new Date(t0.getTime() + 1000) });
    expect(later.published).toBe(2);
    expect(await streamOrder("proj_bf")).toEqual(["a", "b"]);
  });

  it("keeps each project's order and gap-free offsets with batched publishers racing concurrent writers", async () => {
    const a = "proj_border_a";
    const b = projectOnStreamOf(a, "proj_border_b");
    await seedProjects(t.db, [a, b]);
    await seedChange(t.db, a, "chg_ba");
    await seedChange(t.db, b, "chg_bb");
    const perWriter = 200;
    const deps = { config, sink: postgresStreamSink, nudger: noNudge, now: () => new Date() };
    let writing = true;
    const writers = writeConcurrently(
      { projectId: a, changeId: "chg_ba" },
      { projectId: b, changeId: "chg_bb" },
      perWriter,
    );
    const publishers = [0, 1].map(async () => {
      while (writing) await publishDue(t.db, deps);
    });
    await writers;
    writing = false;
    await Promise.all(publishers);
    await waitFor("every row published", async () => {
      await publishDue(t.db, deps);
      return (await t.db.outboxRow.count({ where: { projectId: { in: [a, b] }, state: { not: "published" } } })) === 0;
    });
    const stream = streamIndex(a, 8);
    const all = await t.db.streamEntry.findMany({ where: { streamIndex: stream }, orderBy: { offset: "asc" } });
    const firstOffset = Number(all[0]?.offset);
    expect(all.map((e) => Number(e.offset))).toEqual(all.map((_, i) => firstOffset + i));
    for (const project of [a, b]) {
      const seqs = (await outboxSeqsInStreamOrder(project, all)).map(Number);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    }
  }, 120_000);
});
