import { latestWorkerHeartbeat } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { runFunction } from "../executors/run.ts";
import { productVersion } from "../identity.ts";
import { captureLogs, manualClock, testConfig, testIdentity } from "../testing.ts";
import { heartbeatFunction } from "./heartbeat.ts";

const t = useTestDatabase();

describe("heartbeat", () => {
  it("creates the worker's row, then increments beats and moves lastBeatAt on each run", async () => {
    const heartbeat = heartbeatFunction(testConfig);
    if (!heartbeat) throw new Error("heartbeat missing from the registry");
    expect(heartbeat).toMatchObject({ id: "heartbeat", triggers: { cron: "* * * * *", nudge: "heartbeat" } });
    const clock = manualClock("2030-01-01T00:00:05.000Z");
    const worker = testIdentity("local");
    const deps = { db: t.db, config: testConfig, logger: captureLogs().logger, worker, now: clock.now };

    const first = await runFunction(heartbeat, deps, "default", "start");
    expect(first.record.outcome).toBe("ok");
    clock.set("2030-01-01T00:01:00.000Z");
    await runFunction(heartbeat, deps, "default", "cron");

    const row = await t.db.workerHeartbeat.findUniqueOrThrow({ where: { workerId: worker.workerId } });
    expect(row).toMatchObject({
      executor: "local",
      hostname: worker.hostname,
      pid: process.pid,
      version: productVersion(),
      startedAt: worker.startedAt,
      lastBeatAt: new Date("2030-01-01T00:01:00.000Z"),
      beats: 2,
    });
    expect(await latestWorkerHeartbeat(t.db)).toMatchObject({ workerId: worker.workerId, beats: 2 });
  });

  it("never loses an increment when beats run concurrently", async () => {
    const heartbeat = heartbeatFunction(testConfig);
    if (!heartbeat) throw new Error("heartbeat missing from the registry");
    const worker = testIdentity("local");
    const deps = { db: t.db, config: testConfig, logger: captureLogs().logger, worker, now: () => new Date() };
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => runFunction(heartbeat, deps, "default", "manual")),
    );
    expect(outcomes.map((o) => o.record.outcome)).toEqual(["ok", "ok", "ok", "ok", "ok"]);
    const row = await t.db.workerHeartbeat.findUniqueOrThrow({ where: { workerId: worker.workerId } });
    expect(row.beats).toBe(5);
  });

  it("carries what the worker's Sandbox does, so health and every page can say when commands are not isolated", async () => {
    const heartbeat = heartbeatFunction(testConfig);
    const note = "agent and check commands are NOT isolated: they run as plain processes (bwrap: not found)";
    const worker = { ...testIdentity("local"), sandbox: { kind: "process", isolates: false, note } };
    // Later than every other beat in this file, so it is the latest.
    const now = () => new Date("2031-01-01T00:00:00.000Z");
    const deps = { db: t.db, config: testConfig, logger: captureLogs().logger, worker, now };
    await runFunction(heartbeat, deps, "default", "manual");
    expect(await latestWorkerHeartbeat(t.db)).toMatchObject({
      workerId: worker.workerId,
      sandbox: { kind: "process", isolates: false, note },
    });
  });
});
