import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { InngestTestEngine } from "@inngest/test";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterCommitNudger, withTransaction } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { heartbeatFunction } from "../functions/heartbeat.ts";
import type { WorkerFunction } from "../functions/types.ts";
import { stoppedAfterEach } from "../test-hooks.ts";
import { type CapturedLogs, captureLogs, manualClock, testConfig, testIdentity } from "../testing.ts";
import { createInngestClient, createInngestExecutor, type InngestExecutor, inngestNudgeSender } from "./inngest.ts";

const t = useTestDatabase();
const running = stoppedAfterEach<InngestExecutor>();

const devSettings = { INNGEST_DEV: "1", RHUMBATRON_WORKER_PORT: 3030 } as const;

function executor(logs: CapturedLogs, functions: WorkerFunction[], settings: object = devSettings) {
  const clock = manualClock("2030-01-01T00:01:00.000Z");
  const worker = testIdentity("inngest");
  const ex = createInngestExecutor({
    db: t.db,
    config: testConfig,
    logger: logs.logger,
    worker,
    now: clock.now,
    functions,
    settings: { RHUMBATRON_WORKER_PORT: 3030, ...settings },
    port: 0,
    host: "127.0.0.1",
  });
  running.push(ex);
  return { ex, worker, clock };
}

function only<T>(items: T[]): T {
  expect(items).toHaveLength(1);
  return items[0] as T;
}

describe("inngest executor", () => {
  it("registers heartbeat with its cron, its nudge event, no retries and one run at a time per key", () => {
    const { ex } = executor(captureLogs(), [heartbeatFunction(testConfig)]);
    const fn = only(ex.inngestFunctions);
    expect(fn.id()).toBe("heartbeat");
    expect(fn.opts).toMatchObject({
      retries: 0,
      concurrency: { limit: 1, key: "event.data.key" },
      triggers: [{ cron: "* * * * *" }, { event: "rhumbatron/nudge.heartbeat" }],
    });
  });

  it("runs the heartbeat through Inngest against the database, from a cron and from a nudge", async () => {
    const logs = captureLogs();
    const { ex, worker, clock } = executor(logs, [heartbeatFunction(testConfig)]);
    // One engine per run: an engine memoises step results across its executions.
    const engine = () => new InngestTestEngine({ function: only(ex.inngestFunctions) });

    const cron = await engine().execute({ events: [{ name: "inngest/scheduled.timer", data: { cron: "* * * * *" } }] });
    expect(cron.error).toBeUndefined();
    expect(cron.result).toEqual({ workerId: worker.workerId, beats: 1, lastBeatAt: "2030-01-01T00:01:00.000Z" });

    clock.set("2030-01-01T00:01:07.000Z");
    const nudged = await engine().execute({
      events: [{ name: "rhumbatron/nudge.heartbeat", data: { key: "proj_1" } }],
    });
    expect(nudged.result).toMatchObject({ beats: 2, lastBeatAt: "2030-01-01T00:01:07.000Z" });

    const row = await t.db.workerHeartbeat.findUniqueOrThrow({ where: { workerId: worker.workerId } });
    expect(row).toMatchObject({ executor: "inngest", beats: 2, lastBeatAt: new Date("2030-01-01T00:01:07.000Z") });
    expect(logs.runs("heartbeat").map((l) => [l.trigger, l.key, l.outcome])).toEqual([
      ["cron", "default", "ok"],
      ["nudge", "proj_1", "ok"],
    ]);
  });

  it("rejects a failing run with the original error (so Inngest retries it) and logs it", async () => {
    const logs = captureLogs();
    const boom: WorkerFunction = {
      id: "boom",
      triggers: { nudge: "boom" },
      retries: 3,
      handler: async () => {
        throw new Error("disk on fire");
      },
    };
    const { ex } = executor(logs, [boom]);
    const fn = only(ex.inngestFunctions);
    expect(fn.opts.retries).toBe(3);
    const run = await new InngestTestEngine({ function: fn }).execute({
      events: [{ name: "rhumbatron/nudge.boom", data: {} }],
    });
    expect(run.error).toMatchObject({ message: "disk on fire" });
    expect(logs.runs("boom")).toEqual([
      expect.objectContaining({ trigger: "nudge", outcome: "error", error: "disk on fire" }),
    ]);
  });

  it("serves the functions at /api/inngest: GET reports the function count in dev mode", async () => {
    const { ex } = executor(captureLogs(), [heartbeatFunction(testConfig)]);
    await ex.start();
    const res = await fetch(`http://127.0.0.1:${ex.port}/api/inngest`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ function_count: 1, mode: "dev" });
    expect((await fetch(`http://127.0.0.1:${ex.port}/elsewhere`)).status).toBe(404);
  });

  it("in cloud mode (no INNGEST_DEV) refuses to start without a signing key, and refuses unsigned requests", async () => {
    const functions = [heartbeatFunction(testConfig)];
    const unsigned = executor(captureLogs(), functions, {}).ex;
    await expect(unsigned.start()).rejects.toMatchObject({ code: "INVALID_CONFIG" });

    const { ex } = executor(captureLogs(), functions, { INNGEST_SIGNING_KEY: `signkey-test-${"ab".repeat(32)}` });
    await ex.start();
    const res = await fetch(`http://127.0.0.1:${ex.port}/api/inngest`);
    expect(res.status).toBe(401);
  });
});

describe("inngestNudgeSender", () => {
  it("sends rhumbatron/nudge.<channel> to the event API after commit, and nothing on rollback", async () => {
    // A local server speaking Inngest's event API wire format stands in for Inngest.
    const received: { path: string; body: unknown }[] = [];
    const api = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        received.push({ path: req.url ?? "", body: JSON.parse(body) });
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ids: ["evt_1"], status: 200 }));
      });
    });
    await new Promise<void>((r) => api.listen(0, "127.0.0.1", r));
    try {
      const port = (api.address() as AddressInfo).port;
      const client = createInngestClient({
        INNGEST_BASE_URL: `http://127.0.0.1:${port}/`,
        INNGEST_EVENT_KEY: "test-key",
        INNGEST_SIGNING_KEY: undefined,
        INNGEST_DEV: undefined,
      });
      const nudger = afterCommitNudger(inngestNudgeSender(client));
      await withTransaction(t.db, async (ctx) => {
        await nudger.nudge(ctx, "heartbeat", "rolled-back");
        throw new Error("roll back");
      }).catch(() => {});
      await withTransaction(t.db, (ctx) => nudger.nudge(ctx, "heartbeat", "proj_1"));
      await withTransaction(t.db, (ctx) => nudger.nudge(ctx, "heartbeat"));
      expect(received.map((r) => r.path)).toEqual(["/e/test-key", "/e/test-key"]);
      expect(received.map((r) => r.body)).toEqual([
        [expect.objectContaining({ name: "rhumbatron/nudge.heartbeat", data: { key: "proj_1" } })],
        [expect.objectContaining({ name: "rhumbatron/nudge.heartbeat", data: {} })],
      ]);
    } finally {
      await new Promise((r) => api.close(r));
    }
  });
});
