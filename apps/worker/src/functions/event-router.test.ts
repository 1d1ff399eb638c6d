import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { streamIndex } from "@rhumbatron/core";
import { localFolderBlobStore } from "@rhumbatron/db";
import { seedChange, seedProjects, testEvent, useTestDatabase, waitFor } from "@rhumbatron/db/testing";
import {
  appendToOutbox,
  EVENT_ROUTER_CHANNEL,
  pgNotifyNudger,
  pgNudgeChannel,
  withTransaction,
} from "@rhumbatron/runtime";
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { LocalExecutor } from "../executors/local.ts";
import { stoppedAfterEach } from "../test-hooks.ts";
import { captureLogs, startNudgeOnlyExecutor, testConfig, testIdentity } from "../testing.ts";
import { buildFunctions } from "./index.ts";
import type { FunctionContext, RunTrigger } from "./types.ts";

const t = useTestDatabase();
const running = stoppedAfterEach<LocalExecutor>();

function setup() {
  const blobs = localFolderBlobStore(mkdtempSync(join(tmpdir(), "rhumbatron-blobs-")));
  const functions = buildFunctions({ config: testConfig, nudger: pgNotifyNudger, blobs });
  const byId = (id: string) => {
    const fn = functions.find((f) => f.id === id);
    if (!fn) throw new Error(id);
    return fn;
  };
  const logs = captureLogs();
  const run = (id: string, trigger: RunTrigger, key: string, now: Date) =>
    byId(id).handler({
      db: t.db,
      config: testConfig,
      logger: logs.logger,
      now: () => now,
      key,
      trigger,
      worker: testIdentity(),
    } satisfies FunctionContext);
  return { blobs, functions, run, logs };
}

async function writeEvents(projectId: string, n: number) {
  await seedProjects(t.db, [projectId]);
  await seedChange(t.db, projectId, `chg_${projectId}`);
  await withTransaction(t.db, (ctx) =>
    appendToOutbox(
      ctx,
      [
        testEvent("change.created", {
          projectId,
          changeId: `chg_${projectId}`,
          payload: { title: "Add wishlist", riskTier: "medium", clientRequestId: "r1", taskIds: ["t1"] },
        }),
        ...Array.from({ length: n }, (_, i) =>
          testEvent("task.ready", {
            projectId,
            changeId: `chg_${projectId}`,
            taskId: `t${i}`,
            payload: { key: `t${i}` },
          }),
        ),
      ],
      { config: testConfig, nudger: pgNotifyNudger },
    ),
  );
}

describe("the event pipeline in the worker", () => {
  it("answers a nudge that names no stream (the listener's catch-up) with one nudge per stream", async () => {
    const { run } = setup();
    const listener = new pg.Client({ connectionString: t.url });
    await listener.connect();
    const got: string[] = [];
    listener.on("notification", (n) => got.push(String(n.payload)));
    await listener.query(`LISTEN ${pgNudgeChannel(EVENT_ROUTER_CHANNEL)}`);
    expect(await run("event-router", "nudge", "default", new Date())).toEqual({ catchUp: testConfig.streams.count });
    await waitFor("a nudge for every stream", () => got.length === testConfig.streams.count);
    expect(got.sort()).toEqual(Array.from({ length: testConfig.streams.count }, (_, i) => String(i)).sort());
    await listener.end();
  });

  it("goes outbox -> stream -> project view, and on the cron tick archives; analytics counts metrics on its own", async () => {
    const { run, blobs } = setup();
    const projectId = "proj_pipe1";
    await writeEvents(projectId, 2);
    const now = new Date("2026-05-02T10:00:00Z");
    expect(await run("outbox-publisher", "nudge", "default", now)).toMatchObject({ published: 3 });
    const stream = streamIndex(projectId, 8);
    const routed = (await run("event-router", "nudge", String(stream), now)) as { outcomes: Record<string, string[]> };
    expect(routed.outcomes).toEqual({
      "project-view-projector": ["ack:3"],
      "causal-router": ["ack:3"],
      notifier: ["ack:3"],
      "webhook-fanout": ["ack:3"],
    });
    expect(await t.db.projectView.findUniqueOrThrow({ where: { projectId } })).toMatchObject({
      changesTotal: 1,
      eventCount: 3,
    });

    // A cron tick whose minute selects this stream also runs the archiver (analytics is not its job).
    const tick = new Date(
      Date.UTC(2026, 4, 2, 10, 0) +
        ((stream - (Math.floor(Date.UTC(2026, 4, 2, 10, 0) / 60_000) % 8) + 8) % 8) * 60_000,
    );
    const swept = (await run("event-router", "cron", "default", tick)) as {
      stream: number;
      outcomes: Record<string, string[]>;
    };
    expect(swept.stream).toBe(stream);
    expect(swept.outcomes).toEqual({
      "project-view-projector": ["empty:0"],
      "causal-router": ["empty:0"],
      notifier: ["empty:0"],
      "webhook-fanout": ["empty:0"],
      "audit-archiver": ["ack:3"],
    });
    const keys = await blobs.list("events/");
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(
      new RegExp(`^events/\\d{4}-\\d{2}-\\d{2}/stream-0${stream}/part-\\d+-[0-9a-f]{16}\\.ndjson\\.gz$`),
    );
    const obj = await blobs.get(keys[0] as string);
    const lines = gunzipSync(obj?.body ?? new Uint8Array())
      .toString("utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.eventType)).toEqual(["change.created", "task.ready", "task.ready"]);
    expect(await t.db.metricPoint.count({ where: { projectId } })).toBe(0);
    expect(await run("analytics-projector", "nudge", String(stream), now)).toMatchObject({
      more: [],
      outcomes: { [String(stream)]: ["ack:3"] },
    });
    expect(await t.db.metricPoint.count({ where: { projectId } })).toBe(3);
  });

  it("refuses a nudge for a stream that does not exist, without touching anything", async () => {
    const { run } = setup();
    await expect(run("event-router", "nudge", "99", new Date())).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });

  it("maintenance deletes entries past 7 days and archives past their retention", async () => {
    const { run, blobs } = setup();
    const projectId = "proj_pipe2";
    await writeEvents(projectId, 1);
    const old = new Date("2026-01-01T00:00:00Z");
    await run("outbox-publisher", "manual", "default", old);
    await blobs.put("events/2026-01-01/stream-00/part-1767225600000-0123456789abcdef.ndjson.gz", new Uint8Array([1]));
    await blobs.put("events/2026-01-31/stream-00/part-1769817600000-0123456789abcdef.ndjson.gz", new Uint8Array([1]));
    const r = await run("maintenance", "cron", "default", new Date("2026-02-01T04:17:00Z"));
    expect(r).toMatchObject({ streamEntriesDeleted: 2, archiveObjectsDeleted: 1 });
    expect(await blobs.list("events/")).toEqual([
      "events/2026-01-31/stream-00/part-1769817600000-0123456789abcdef.ndjson.gz",
    ]);
  });

  it("with the local executor, a backlog larger than one run's quota drains through self-nudges", async () => {
    const { functions, logs } = setup();
    const executor = await startNudgeOnlyExecutor({
      db: t.db,
      databaseUrl: t.url,
      logs,
      functions: functions.filter((f) => f.id === "outbox-publisher" || f.id === "event-router"),
    });
    running.push(executor);
    const projectId = "proj_backlog";
    await writeEvents(projectId, 449);
    await untilViewCount(projectId, 450);
    expect(await t.db.projectView.findUnique({ where: { projectId } })).toMatchObject({ eventCount: 450 });
    expect(logs.runs("outbox-publisher").length).toBeGreaterThanOrEqual(5);
  }, 180_000);

  it("with the local executor, a committed write reaches the project view through nudges alone", async () => {
    const { functions, logs } = setup();
    const executor = await startNudgeOnlyExecutor({ db: t.db, databaseUrl: t.url, logs, functions });
    running.push(executor);
    const projectId = "proj_pipe3";
    await writeEvents(projectId, 1);
    await untilViewCount(projectId, 2);
    expect(await t.db.projectView.findUnique({ where: { projectId } })).toMatchObject({ eventCount: 2 });
  }, 180_000);
});

/** Waits for the project view to count `n` Events, under one generous limit (a busy machine is slow, not wrong). */
async function untilViewCount(projectId: string, n: number, limitMs = 150_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (Date.now() < end) {
    const view = await t.db.projectView.findUnique({ where: { projectId } });
    if (view?.eventCount === n) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}
