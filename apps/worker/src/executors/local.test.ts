import { useTestDatabase } from "@rhumbatron/db/testing";
import { pgNotifyNudger, withTransaction } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { heartbeatFunction } from "../functions/heartbeat.ts";
import type { WorkerFunction } from "../functions/types.ts";
import { stoppedAfterEach } from "../test-hooks.ts";
import { type CapturedLogs, captureLogs, deferred, manualClock, testConfig, testIdentity } from "../testing.ts";
import type { Timers } from "./cron.ts";
import { createLocalExecutor, type LocalExecutor } from "./local.ts";

const t = useTestDatabase();
const running = stoppedAfterEach<LocalExecutor>();

/** Cron timers that only fire when a test fires them, so a real minute boundary never adds a run. */
function heldTimers(start = "2030-01-01T00:00:30.000Z") {
  const clock = manualClock(start);
  const armed: (() => void)[] = [];
  const timers: Timers = {
    now: clock.now,
    setTimeout: (fn) => armed.push(fn),
    clearTimeout: () => {},
  };
  return { clock, timers, armed };
}

function startExecutor(functions: WorkerFunction[], logs: CapturedLogs, timers = heldTimers().timers) {
  const worker = testIdentity("local");
  const executor = createLocalExecutor({
    db: t.db,
    databaseUrl: t.url,
    config: testConfig,
    logger: logs.logger,
    worker,
    now: timers.now,
    functions,
    timers,
    listenerBackoff: { minMs: 10, maxMs: 100 },
  });
  running.push(executor);
  return { executor, worker, started: executor.start() };
}

async function nudge(channel: string, payload?: string) {
  await withTransaction(t.db, (ctx) => pgNotifyNudger.nudge(ctx, channel, payload));
}

async function beats(workerId: string) {
  return (await t.db.workerHeartbeat.findUnique({ where: { workerId } }))?.beats ?? 0;
}

const isRun = (fn: string, trigger: string) => (l: Record<string, unknown>) =>
  l.function === fn && l.trigger === trigger && "outcome" in l;
const nudgesReceived = (logs: CapturedLogs) => logs.lines.filter((l) => l.msg === "nudge received");

/** A function that blocks inside its handler until the test opens the gate. */
function gatedFunction(id: string) {
  const gate = deferred();
  const entered = deferred();
  const callWaiters: { n: number; resolve: () => void }[] = [];
  const fn = {
    calls: 0,
    finished: 0,
    gate,
    entered,
    /** Resolves once the handler has been entered `n` times. */
    untilCalls(n: number) {
      const d = deferred();
      if (fn.calls >= n) d.resolve();
      else callWaiters.push({ n, resolve: d.resolve });
      return d.promise;
    },
    def: {
      id,
      triggers: { nudge: id },
      retries: 0,
      handler: async () => {
        fn.calls++;
        entered.resolve();
        for (const w of callWaiters) if (fn.calls >= w.n) w.resolve();
        await gate.promise;
        fn.finished++;
        return null;
      },
    } satisfies WorkerFunction,
  };
  return fn;
}

describe("local executor", () => {
  it("beats once at start and on a committed nudge, never on a rolled-back one", async () => {
    const logs = captureLogs();
    const { executor, worker, started } = startExecutor([heartbeatFunction(testConfig)], logs);
    await started;
    await executor.idle();
    expect(await beats(worker.workerId)).toBe(1);

    await withTransaction(t.db, async (ctx) => {
      await pgNotifyNudger.nudge(ctx, "heartbeat", "rolled-back");
      throw new Error("roll back");
    }).catch(() => {});
    await nudge("heartbeat");
    // A routine finished run is a debug line: `npm start` shows one line per meaningful event.
    expect(await logs.waitFor(isRun("heartbeat", "nudge"))).toMatchObject({ level: 20, msg: "run finished" });
    await executor.idle();

    // Notifications arrive in commit order, so a rolled-back one would have come first.
    expect(nudgesReceived(logs).map((l) => l.key)).toEqual(["default"]);
    expect(logs.runs("heartbeat").map((l) => [l.trigger, l.outcome])).toEqual([
      ["start", "ok"],
      ["nudge", "ok"],
    ]);
    expect(await beats(worker.workerId)).toBe(2);
  });

  it("folds a burst of nudges during a run into exactly one follow-up run", async () => {
    const logs = captureLogs();
    const probe = gatedFunction("probe");
    const { executor, started } = startExecutor([probe.def], logs);
    await started;
    await probe.entered.promise; // the start run is now in flight

    for (let i = 0; i < 5; i++) await nudge("probe");
    await logs.waitFor(() => nudgesReceived(logs).length === 5);
    probe.gate.resolve();
    await logs.waitFor(isRun("probe", "nudge"));
    await executor.idle();

    expect(probe.calls).toBe(2);
    expect(logs.runs("probe").map((l) => l.trigger)).toEqual(["start", "nudge"]);
  });

  it("runs different keys side by side but one run per key", async () => {
    const logs = captureLogs();
    const probe = gatedFunction("probe");
    const { executor, started } = startExecutor([probe.def], logs);
    await started;
    await probe.entered.promise;
    const other = executor.runNow("probe", "proj_other"); // another key: not blocked by the start run
    const same = executor.runNow("probe"); // same key: waits, then runs once more
    await probe.untilCalls(2);
    expect(probe.calls).toBe(2);
    probe.gate.resolve();
    expect(await other).toMatchObject({ key: "proj_other", trigger: "manual", outcome: "ok" });
    expect(await same).toMatchObject({ key: "default", trigger: "manual", outcome: "ok" });
    expect(probe.calls).toBe(3);
  });

  it("logs a throwing run as one error line and keeps running", async () => {
    const logs = captureLogs();
    const boom: WorkerFunction = {
      id: "boom",
      triggers: { nudge: "boom" },
      retries: 0,
      handler: async () => {
        throw new Error("disk on fire");
      },
    };
    const { executor, worker, started } = startExecutor([boom, ...[heartbeatFunction(testConfig)]], logs);
    await started;
    await executor.idle();
    const failed = await logs.waitFor(isRun("boom", "start"));
    expect(failed).toMatchObject({ level: 50, function: "boom", trigger: "start", key: "default", outcome: "error" });
    expect(failed.error).toBe("disk on fire");
    expect(typeof failed.durationMs).toBe("number");

    await nudge("boom", "proj_1");
    expect(await logs.waitFor(isRun("boom", "nudge"))).toMatchObject({ key: "proj_1", outcome: "error" });
    expect(await executor.runNow("heartbeat")).toMatchObject({ function: "heartbeat", outcome: "ok" });
    expect(await beats(worker.workerId)).toBe(2);
  });

  it("runs a function when its cron comes due", async () => {
    const logs = captureLogs();
    const held = heldTimers("2030-01-01T00:00:30.000Z");
    const { executor, worker, started } = startExecutor([heartbeatFunction(testConfig)], logs, held.timers);
    await started;
    await executor.idle();
    expect(held.armed).toHaveLength(1);
    held.clock.set("2030-01-01T00:01:00.000Z");
    held.armed[0]?.();
    await logs.waitFor(isRun("heartbeat", "cron"));
    await executor.idle();
    const row = await t.db.workerHeartbeat.findUniqueOrThrow({ where: { workerId: worker.workerId } });
    expect(row).toMatchObject({ beats: 2, lastBeatAt: new Date("2030-01-01T00:01:00.000Z") });
    expect(held.armed).toHaveLength(2); // re-armed for the next minute
  });

  it("stop() waits for the run in flight, closes its connection and refuses new runs", async () => {
    const logs = captureLogs();
    const probe = gatedFunction("probe");
    const { executor, started } = startExecutor([probe.def], logs);
    await started;
    await probe.entered.promise;

    const order: string[] = [];
    const stopped = executor.stop().then(() => order.push("stopped"));
    await waitUntil(async () => (await listenerConnections()) === 0);
    expect(order).toEqual([]); // connections are closed, but the run is still in flight
    probe.gate.resolve();
    await logs.waitFor(isRun("probe", "start")).then(() => order.push("run finished"));
    await stopped;
    expect(order).toEqual(["run finished", "stopped"]);
    expect(probe.finished).toBe(1);
    await expect(executor.runNow("probe")).rejects.toMatchObject({ code: "UNAVAILABLE" });
  });

  it("reconnects the listener after the connection drops, catches up, and hears later nudges", async () => {
    const logs = captureLogs();
    const { executor, worker, started } = startExecutor([heartbeatFunction(testConfig)], logs);
    await started;
    await executor.idle();

    await t.db.$queryRawUnsafe(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'rhumbatron-worker-nudges' AND datname = current_database()",
    );
    await logs.waitFor((l) => l.msg === "nudge listener reconnected");
    await logs.waitFor(isRun("heartbeat", "nudge")); // the catch-up run for nudges lost while down
    await nudge("heartbeat", "after-reconnect");
    expect(await logs.waitFor((l) => l.key === "after-reconnect" && "outcome" in l)).toMatchObject({ outcome: "ok" });
    await executor.idle();
    expect(await beats(worker.workerId)).toBe(3);
  });
});

async function listenerConnections(): Promise<number> {
  const rows = await t.db.$queryRawUnsafe<{ n: number }[]>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'rhumbatron-worker-nudges' AND datname = current_database()",
  );
  return rows[0]?.n ?? 0;
}

/** Polls a condition; used only to observe an outcome, never to assert a duration. */
async function waitUntil(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 10));
}
