import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type RhumbatronConfig, streamIndex } from "@rhumbatron/core";
import { localFolderBlobStore } from "@rhumbatron/db";
import { seedChange, seedProjects, testEvent, useTestDatabase, waitFor } from "@rhumbatron/db/testing";
import {
  appendToOutbox,
  type Nudger,
  pgNotifyNudger,
  postgresStreamSink,
  publishDue,
  withTransaction,
} from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import type { LocalExecutor } from "../executors/local.ts";
import { stoppedAfterEach } from "../test-hooks.ts";
import { captureLogs, startNudgeOnlyExecutor, testConfig, testIdentity } from "../testing.ts";
import { ANALYTICS_BATCHES_PER_RUN, analyticsProjectorFunction } from "./analytics-projector.ts";
import { buildFunctions } from "./index.ts";
import type { RunTrigger } from "./types.ts";

const t = useTestDatabase();
const running = stoppedAfterEach<LocalExecutor>();
const silent: Nudger = { nudge: async () => {} };

/**
 * A Change's creation and `n` task.ready Events of one project, in its outbox (each gives one metric
 * point). The outbox write nudges the publisher only with `nudger` (pg_notify for a running executor).
 */
async function writeEvents(projectId: string, n: number, config: RhumbatronConfig = testConfig, nudger = silent) {
  await seedProjects(t.db, [projectId]);
  await seedChange(t.db, projectId, `chg_${projectId}`);
  const changeId = `chg_${projectId}`;
  await withTransaction(t.db, (ctx) =>
    appendToOutbox(
      ctx,
      [
        testEvent("change.created", {
          projectId,
          changeId,
          payload: { title: "Add wishlist", riskTier: "medium", clientRequestId: "r1", taskIds: ["t1"] },
        }),
        ...Array.from({ length: n }, (_, i) =>
          testEvent("task.ready", { projectId, changeId, taskId: `t${i}`, payload: { key: `t${i}` } }),
        ),
      ],
      { config, nudger },
    ),
  );
}

const points = (projectId: string) => t.db.metricPoint.count({ where: { projectId } });

function runner(config: RhumbatronConfig, nudger: Nudger) {
  const fn = analyticsProjectorFunction({ config, nudger });
  const logs = captureLogs();
  return (trigger: RunTrigger, key: string) =>
    fn.handler({
      db: t.db,
      config,
      logger: logs.logger,
      now: () => new Date("2026-05-02T10:00:00Z"),
      key,
      trigger,
      worker: testIdentity(),
    }) as Promise<{ streams: number; more: number[]; outcomes: Record<string, string[]> }>;
}

describe("the analytics projector", () => {
  it("projects a backlog of several batches as soon as it is published, through nudges alone", async () => {
    const logs = captureLogs();
    const blobs = localFolderBlobStore(mkdtempSync(join(tmpdir(), "rhumbatron-blobs-")));
    const functions = buildFunctions({ config: testConfig, nudger: pgNotifyNudger, blobs }).filter((f) =>
      ["outbox-publisher", "analytics-projector"].includes(f.id),
    );
    // No cron timer ever fires here: every run is the start run or a nudge's.
    const executor = await startNudgeOnlyExecutor({ db: t.db, databaseUrl: t.url, logs, functions });
    running.push(executor);
    const projectId = "proj_an1";
    const events = 2 * testConfig.eventRouter.batchSize + 50;
    await writeEvents(projectId, events - 1, testConfig, pgNotifyNudger);
    await waitFor(`${events} metric points`, async () => (await points(projectId)) === events, 150_000);
    // A run logs its outcome after its last batch commits: the runs are read once they have ended.
    await executor.idle();
    const nudged = logs.runs("analytics-projector").filter((l) => l.trigger === "nudge");
    expect(nudged.length).toBeGreaterThanOrEqual(1);
  }, 180_000);

  it("keeps a run to its batches and nudges itself for the rest of the stream", async () => {
    const config = loadConfig("dev", { eventRouter: { batchSize: 5 } });
    const sent: string[] = [];
    const recording: Nudger = { nudge: async (_ctx, channel, payload) => void sent.push(`${channel}:${payload}`) };
    const run = runner(config, recording);
    const projectId = "proj_an2";
    const stream = streamIndex(projectId, config.streams.count);
    const total = ANALYTICS_BATCHES_PER_RUN * 5 + 11;
    await writeEvents(projectId, total - 1, config);
    await publishDue(t.db, { config, sink: postgresStreamSink, nudger: silent, now: () => new Date() });

    const first = await run("nudge", String(stream));
    expect(first.more).toEqual([stream]);
    expect(first.outcomes[String(stream)]).toHaveLength(ANALYTICS_BATCHES_PER_RUN);
    expect(await points(projectId)).toBe(ANALYTICS_BATCHES_PER_RUN * 5);
    expect(sent).toEqual([`analytics:${stream}`]);

    const second = await run("nudge", String(stream));
    expect(second.more).toEqual([]);
    expect(await points(projectId)).toBe(total);
    expect(sent).toHaveLength(1);
  });

  it("on the cron backstop (a lost nudge) drains every stream; a nudge for a stream that does not exist is refused", async () => {
    const run = runner(testConfig, silent);
    const a = "proj_an3";
    const b = "proj_an4";
    expect(streamIndex(a, 8)).not.toBe(streamIndex(b, 8));
    await writeEvents(a, 2);
    await writeEvents(b, 4);
    await publishDue(t.db, { config: testConfig, sink: postgresStreamSink, nudger: silent, now: () => new Date() });
    const r = await run("cron", "default");
    expect(r.streams).toBe(testConfig.streams.count);
    expect([await points(a), await points(b)]).toEqual([3, 5]);
    await expect(run("nudge", "8")).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });
});
