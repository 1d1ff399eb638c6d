import { loadConfig } from "@rhumbatron/core";
import { afterCommitNudger, appendToOutbox, type Nudger, pgNotifyNudger } from "@rhumbatron/runtime";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { seedChange, seedProjects, testEvent, useTestDatabase, waitFor, waitForLockWaiter } from "../testing/index.ts";
import { withTransaction } from "../transaction.ts";
import { conflictError, domainWrite } from "./domain-write.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
const deps = { config, nudger: pgNotifyNudger };

async function seedTask(projectId: string, changeId: string, taskId: string) {
  await seedProjects(t.db, [projectId]);
  await seedChange(t.db, projectId, changeId);
  await t.db.task.create({
    data: { id: taskId, changeId, key: taskId, title: taskId, state: "running", agentId: "a1" },
  });
}

const failed = (projectId: string, changeId: string, taskId: string, key?: string) =>
  testEvent("task.failed", { projectId, changeId, taskId, ...(key ? { key } : {}), payload: { reason: key ?? "x" } });

async function outboxOf(projectId: string) {
  return t.db.outboxRow.findMany({ where: { projectId }, orderBy: { projectSeq: "asc" } });
}

describe("domainWrite", () => {
  it("moves the row in the expected state and appends its Events in one statement", async () => {
    await seedTask("proj_dw1", "chg_dw1", "task_dw1");
    const ev = failed("proj_dw1", "chg_dw1", "task_dw1");
    const r = await domainWrite(
      t.db,
      {
        table: "tasks",
        id: "task_dw1",
        changeId: "chg_dw1",
        projectId: "proj_dw1",
        expect: { state: "running", agent_id: "a1" },
        set: { state: "failed" },
        events: [ev],
      },
      deps,
    );
    expect(r).toMatchObject({ applied: true, eventIds: [ev.eventId], row: { state: "failed", agent_id: "a1" } });
    const task = await t.db.task.findUniqueOrThrow({ where: { id: "task_dw1" } });
    expect(task.state).toBe("failed");
    const rows = await outboxOf("proj_dw1");
    expect(rows.map((x) => [x.eventId, Number(x.projectSeq), x.state])).toEqual([[ev.eventId, 1, "pending"]]);
    expect(rows[0]?.envelope).toEqual(JSON.parse(JSON.stringify(ev)));
  });

  it("writes nothing when the row is not in the expected state, and says what it found", async () => {
    await seedTask("proj_dw2", "chg_dw2", "task_dw2");
    const ev = failed("proj_dw2", "chg_dw2", "task_dw2");
    const spec = {
      table: "tasks" as const,
      id: "task_dw2",
      changeId: "chg_dw2",
      projectId: "proj_dw2",
      expect: { state: ["ready", "pending"] as const, agent_id: "a1" },
      set: { state: "running" as const },
      events: [ev],
    };
    const before = await t.db.task.findUniqueOrThrow({ where: { id: "task_dw2" } });
    const r = await domainWrite(t.db, spec, deps);
    expect(r).toMatchObject({ applied: false, current: { state: "running", agent_id: "a1" } });
    if (r.applied) throw new Error("unexpected");
    expect(conflictError(spec, r.current)).toMatchObject({ code: "CONFLICT" });
    // A wrong holder is a mismatch too (a null expected value is compared as a value).
    expect(await domainWrite(t.db, { ...spec, expect: { state: "running", agent_id: null } }, deps)).toMatchObject({
      applied: false,
    });
    expect(await t.db.task.findUniqueOrThrow({ where: { id: "task_dw2" } })).toEqual(before);
    expect(await outboxOf("proj_dw2")).toEqual([]);
    expect(await t.db.outboxHead.count({ where: { projectId: "proj_dw2" } })).toBe(0);
    await expect(domainWrite(t.db, { ...spec, id: "task_missing" }, deps)).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(domainWrite(t.db, { ...spec, changeId: "chg_missing" }, deps)).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    // The same event_id twice in one write is refused before anything is sent.
    await expect(
      domainWrite(t.db, { ...spec, expect: { state: "running" }, events: [ev, ev] }, deps),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(
      domainWrite(t.db, { ...spec, events: [failed("proj_other", "chg_dw2", "task_dw2")] }, deps),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect((await t.db.task.findUniqueOrThrow({ where: { id: "task_dw2" } })).state).toBe("running");
  });

  it("ignores a repeated event_id while the row still moves", async () => {
    await seedTask("proj_dw3", "chg_dw3", "task_dw3");
    const ev = failed("proj_dw3", "chg_dw3", "task_dw3");
    await withTransaction(t.db, (ctx) => appendToOutbox(ctx, [ev], deps));
    const fresh = failed("proj_dw3", "chg_dw3", "task_dw3", "second");
    const r = await domainWrite(
      t.db,
      {
        table: "changes",
        id: "chg_dw3",
        changeId: "chg_dw3",
        projectId: "proj_dw3",
        expect: { status: "open" },
        set: { status: "verifying", land_when_ready: true },
        events: [ev, fresh],
      },
      deps,
    );
    expect(r).toMatchObject({ applied: true, eventIds: [fresh.eventId] });
    expect(await t.db.change.findUniqueOrThrow({ where: { id: "chg_dw3" } })).toMatchObject({
      status: "verifying",
      landWhenReady: true,
    });
    expect((await outboxOf("proj_dw3")).map((x) => [x.eventId, Number(x.projectSeq)])).toEqual([
      [ev.eventId, 1],
      [fresh.eventId, 2],
    ]);
  });

  it("waits for the shard's lock and takes the next sequence number after the holder commits", async () => {
    await seedTask("proj_dw4", "chg_dw4", "task_dw4");
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    let locked = false;
    const first = withTransaction(t.db, async (ctx) => {
      await ctx.tx.$executeRaw`SELECT 1 FROM changes WHERE id = 'chg_dw4' FOR UPDATE`;
      await appendToOutbox(ctx, [failed("proj_dw4", "chg_dw4", "task_dw4", "first")], deps);
      locked = true;
      await held;
    });
    await waitFor("the first transaction holds the change", () => locked);
    const second = domainWrite(
      t.db,
      {
        table: "tasks",
        id: "task_dw4",
        changeId: "chg_dw4",
        projectId: "proj_dw4",
        expect: { state: "running" },
        set: { state: "completed" },
        events: [failed("proj_dw4", "chg_dw4", "task_dw4", "second")],
      },
      deps,
    );
    await waitForLockWaiter(t.db);
    expect(await outboxOf("proj_dw4")).toEqual([]);
    release();
    await first;
    expect(await second).toMatchObject({ applied: true });
    expect(
      (await outboxOf("proj_dw4")).map((x) => (x.envelope as { payload: { reason: string } }).payload.reason),
    ).toEqual(["first", "second"]);
  });

  it("nudges the publisher only when it wrote: pg_notify in the statement, or through the nudger once", async () => {
    await seedTask("proj_dw5", "chg_dw5", "task_dw5");
    const listener = new pg.Client({ connectionString: t.url });
    await listener.connect();
    const got: string[] = [];
    listener.on("notification", (n) => got.push(`${n.channel}:${n.payload}`));
    await listener.query("LISTEN rhumbatron_outbox");
    const spec = {
      table: "tasks" as const,
      id: "task_dw5",
      changeId: "chg_dw5",
      projectId: "proj_dw5",
      set: { state: "completed" as const },
    };
    const mismatch = await domainWrite(
      t.db,
      { ...spec, expect: { state: "ready" }, events: [failed("proj_dw5", "chg_dw5", "task_dw5", "no")] },
      deps,
    );
    expect(mismatch.applied).toBe(false);
    await domainWrite(
      t.db,
      { ...spec, expect: { state: "running" }, events: [failed("proj_dw5", "chg_dw5", "task_dw5", "yes")] },
      deps,
    );
    // Notifications arrive in commit order: had the mismatch sent one, it would come first.
    await waitFor("the applied write's nudge", () => got.length > 0);
    expect(got).toEqual(["rhumbatron_outbox:"]);
    await listener.end();

    const sent: string[] = [];
    const after: Nudger = afterCommitNudger(async (channel) => void sent.push(channel));
    await domainWrite(
      t.db,
      {
        ...spec,
        expect: { state: "completed" },
        set: { state: "failed" },
        events: [failed("proj_dw5", "chg_dw5", "task_dw5", "after")],
      },
      { config, nudger: after },
    );
    expect(sent).toEqual(["outbox"]);
    // Inside a transaction: several writes, one nudge after the commit.
    await withTransaction(t.db, async (ctx) => {
      await appendToOutbox(ctx, [failed("proj_dw5", "chg_dw5", "task_dw5", "t1")], { config, nudger: after });
      await domainWrite(
        ctx,
        {
          ...spec,
          expect: { state: "failed" },
          set: { state: "completed" },
          events: [failed("proj_dw5", "chg_dw5", "task_dw5", "t2")],
        },
        { config, nudger: after },
      );
      await appendToOutbox(ctx, [failed("proj_dw5", "chg_dw5", "task_dw5", "t3")], { config, nudger: after });
      expect(sent).toEqual(["outbox"]);
    });
    expect(sent).toEqual(["outbox", "outbox"]);
  });

  it("keeps one project's sequence contiguous and in commit order under concurrent writers", async () => {
    const projectId = "proj_dw6";
    await seedProjects(t.db, [projectId]);
    const writers = 4;
    const perWriter = 40;
    for (let w = 0; w < writers; w++) await seedChange(t.db, projectId, `chg_dw6_${w}`);
    // A reader on its own connection: every snapshot it takes must be a gap-free prefix 1..n, so a
    // sequence number never becomes visible before a smaller one (sequence order = commit order).
    const reader = new pg.Client({ connectionString: t.url });
    await reader.connect();
    let writing = true;
    const holes: string[] = [];
    let snapshots = 0;
    const reading = (async () => {
      while (writing) {
        const { rows } = await reader.query<{ n: number; max: string | null }>(
          "SELECT count(*)::int AS n, max(project_seq)::text AS max FROM outbox WHERE project_id = $1",
          [projectId],
        );
        const r = rows[0];
        if (r && r.n !== Number(r.max ?? 0)) holes.push(`${r.n} rows, max ${r.max}`);
        snapshots++;
      }
    })();
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        const changeId = `chg_dw6_${w}`;
        for (let i = 0; i < perWriter; i++) {
          const events = [0, 1].map((k) =>
            testEvent("task.failed", {
              projectId,
              changeId,
              taskId: `w${w}`,
              key: `${i}:${k}`,
              payload: { reason: `${w}:${i}:${k}` },
            }),
          );
          if (i % 2 === 0) {
            const r = await domainWrite(
              t.db,
              {
                table: "changes",
                id: changeId,
                changeId,
                projectId,
                expect: { status: "open" },
                set: { description: String(i) },
                events,
              },
              deps,
            );
            expect(r.applied).toBe(true);
          } else {
            await withTransaction(t.db, (ctx) => appendToOutbox(ctx, events, deps));
          }
        }
      }),
    );
    const seen = snapshots;
    await waitFor("the reader took a snapshot after the writers", () => snapshots > seen + 1);
    writing = false;
    await reading;
    await reader.end();
    expect(holes).toEqual([]);
    const rows = await outboxOf(projectId);
    expect(rows.map((r) => Number(r.projectSeq))).toEqual(rows.map((_, i) => i + 1));
    expect(Number((await t.db.outboxHead.findUniqueOrThrow({ where: { projectId } })).lastSeq)).toBe(
      writers * perWriter * 2,
    );
    // Each write's two Events are consecutive, and each writer's writes keep their order.
    for (let w = 0; w < writers; w++) {
      const mine = rows.filter((r) => (r.envelope as { taskId: string }).taskId === `w${w}`);
      const reasons = mine.map((r) => (r.envelope as { payload: { reason: string } }).payload.reason);
      expect(reasons).toEqual(Array.from({ length: perWriter }, (_, i) => [`${w}:${i}:0`, `${w}:${i}:1`]).flat());
      for (let i = 0; i < mine.length; i += 2)
        expect(Number(mine[i + 1]?.projectSeq)).toBe(Number(mine[i]?.projectSeq) + 1);
    }
  }, 120_000);
});
