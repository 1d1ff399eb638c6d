import { loadConfig, streamIndex } from "@rhumbatron/core";
import { withProjectRoot, withResourceShard } from "@rhumbatron/db";
import {
  seedChange,
  seedProjects,
  testEvent,
  useTestDatabase,
  waitFor,
  waitForLockWaiter,
} from "@rhumbatron/db/testing";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { pgNotifyNudger } from "../nudge.ts";
import { withTransaction } from "../transaction.ts";
import { appendToOutbox } from "./outbox.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
const deps = { config, nudger: pgNotifyNudger };

describe("the outbox", () => {
  it("writes the state change and its Event in one transaction, or neither", async () => {
    await seedProjects(t.db, ["proj_a"]);
    await seedChange(t.db, "proj_a", "chg_a");
    const ev = testEvent("task.failed", {
      projectId: "proj_a",
      changeId: "chg_a",
      taskId: "task_1",
      payload: { reason: "x" },
    });
    await expect(
      withResourceShard(t.db, "change:chg_a", deps, async (ctx) => {
        await ctx.tx.change.update({ where: { id: "chg_a" }, data: { title: "changed" } });
        await appendToOutbox(ctx, [ev], deps);
        throw new Error("crash before commit");
      }),
    ).rejects.toThrow("crash before commit");
    expect((await t.db.change.findUniqueOrThrow({ where: { id: "chg_a" } })).title).toBe("chg_a");
    expect(await t.db.outboxRow.count({ where: { eventId: ev.eventId } })).toBe(0);

    await withResourceShard(t.db, "change:chg_a", deps, async (ctx) => {
      await ctx.tx.change.update({ where: { id: "chg_a" }, data: { title: "changed" } });
      return { result: null, events: [ev] };
    });
    const row = await t.db.outboxRow.findUniqueOrThrow({ where: { eventId: ev.eventId } });
    expect(row).toMatchObject({ state: "pending", attempts: 0, projectId: "proj_a", eventType: "task.failed" });
    expect(row.streamIndex).toBe(streamIndex("proj_a", 8));
    expect(row.envelope).toEqual(JSON.parse(JSON.stringify(ev)));
  });

  it("ignores a repeated event_id (a retried step writes the same Event again)", async () => {
    await seedProjects(t.db, ["proj_b"]);
    await seedChange(t.db, "proj_b", "chg_b");
    const ev = testEvent("task.failed", {
      projectId: "proj_b",
      changeId: "chg_b",
      taskId: "t",
      payload: { reason: "x" },
    });
    const first = await withTransaction(t.db, (ctx) => appendToOutbox(ctx, [ev], deps));
    const second = await withTransaction(t.db, (ctx) => appendToOutbox(ctx, [ev], deps));
    expect(first).toEqual([ev.eventId]);
    expect(second).toEqual([]);
    // Concurrent repeats: still one row.
    const ev2 = testEvent("task.failed", {
      projectId: "proj_b",
      changeId: "chg_b",
      taskId: "u",
      payload: { reason: "y" },
    });
    const results = await Promise.all(
      Array.from({ length: 4 }, () => withTransaction(t.db, (ctx) => appendToOutbox(ctx, [ev2], deps))),
    );
    expect(results.flat()).toEqual([ev2.eventId]);
    expect(await t.db.outboxRow.count({ where: { projectId: "proj_b" } })).toBe(2);
  });

  it("locks the project row for project-root facts and refuses an unknown owner", async () => {
    await seedProjects(t.db, ["proj_c"]);
    const order: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const first = withProjectRoot(t.db, "proj_c", deps, async () => {
      order.push("first locked");
      await held;
      order.push("first done");
      return { result: null, events: [] };
    });
    await waitFor("the first transaction holds the project row", () => order.includes("first locked"));
    const second = withProjectRoot(t.db, "proj_c", deps, async () => {
      order.push("second locked");
      return { result: null, events: [] };
    });
    await waitForLockWaiter(t.db);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(["first locked", "first done", "second locked"]);
    await expect(
      withProjectRoot(t.db, "proj_missing", deps, async () => ({ result: 1, events: [] })),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(
      withResourceShard(t.db, "widget:1", deps, async () => ({ result: 1, events: [] })),
    ).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
  });

  it("nudges the publisher on commit only", async () => {
    await seedProjects(t.db, ["proj_d"]);
    await seedChange(t.db, "proj_d", "chg_d");
    const listener = new pg.Client({ connectionString: t.url });
    await listener.connect();
    const got: string[] = [];
    listener.on("notification", (n) => got.push(n.channel));
    await listener.query("LISTEN rhumbatron_outbox");
    const ev = (k: string) =>
      testEvent("task.failed", { projectId: "proj_d", changeId: "chg_d", taskId: k, payload: { reason: k } });
    await withTransaction(t.db, async (ctx) => {
      await appendToOutbox(ctx, [ev("rolled")], deps);
      throw new Error("rollback");
    }).catch(() => {});
    await withTransaction(t.db, (ctx) => appendToOutbox(ctx, [ev("kept")], deps));
    // Notifications arrive in commit order: had the rolled-back one been sent, it would come first.
    await waitFor("the committed write's nudge", () => got.length > 0);
    expect(got).toEqual(["rhumbatron_outbox"]);
    await listener.end();
  });

  it("looks each Event up in the outbox's index, never by reading the whole outbox", async () => {
    // The append's plan is made on the first call of a connection and kept. Made while the outbox was
    // small it was once a hash anti join over the whole table, so every later write read all of it.
    // pg_stat_xact_user_tables counts this transaction's own scans, so the figure is exact.
    await seedProjects(t.db, ["proj_e"]);
    const c = new pg.Client({ connectionString: t.url });
    await c.connect();
    try {
      await c.query("BEGIN");
      const append = (k: string) =>
        c.query("SELECT rhumbatron_append_outbox($1::jsonb, NULL)", [
          JSON.stringify([
            {
              e: testEvent("task.ready", { projectId: "proj_e", changeId: "chg_e", taskId: k, payload: { key: k } }),
              s: 0,
            },
          ]),
        ]);
      await append("first");
      await c.query(
        `INSERT INTO outbox (event_id, project_id, project_seq, stream_index, event_type, envelope)
         SELECT 'evt_filler_' || g, 'proj_filler', g, 0, 'task.ready', '{}'::jsonb FROM generate_series(1, 3000) g`,
      );
      const scans = async () =>
        (
          await c.query<{ seq_scan: string; idx_scan: string }>(
            "SELECT seq_scan, coalesce(idx_scan, 0) AS idx_scan FROM pg_stat_xact_user_tables WHERE relname = 'outbox'",
          )
        ).rows[0];
      const before = await scans();
      for (let i = 0; i < 12; i++) await append(`later_${i}`);
      const after = await scans();
      expect(Number(after?.seq_scan) - Number(before?.seq_scan)).toBe(0);
      expect(Number(after?.idx_scan) - Number(before?.idx_scan)).toBeGreaterThanOrEqual(12);
      await c.query("ROLLBACK");
    } finally {
      await c.end();
    }
  });
});
