import type { DatabaseHealth, WorkerHealth } from "@rhumbatron/db";
import { describe, expect, it } from "vitest";
import { composeHealth, type HealthInputs, healthHttpStatus } from "./health.ts";

const now = new Date("2026-03-01T12:00:00.000Z");
const STALE_AFTER = 180;
const dbOk: DatabaseHealth = { status: "ok", appliedMigrations: 3 };
const dbDown: DatabaseHealth = { status: "error", error: "connect ECONNREFUSED 127.0.0.1:5432", appliedMigrations: 0 };

function beat(secondsAgo: number): WorkerHealth {
  return {
    workerId: "wrk_1",
    executor: "local",
    lastBeatAt: new Date(now.getTime() - secondsAgo * 1000),
    beats: 7,
    version: "0.1.0",
    sandbox: { kind: "bubblewrap", isolates: true, note: null },
  };
}

const inputs = (over: Partial<HealthInputs>): HealthInputs => ({
  version: "0.1.0",
  database: dbOk,
  executor: "local",
  heartbeat: beat(30),
  now,
  heartbeatStaleSeconds: STALE_AFTER,
  ...over,
});

describe("composeHealth", () => {
  it("is ok with the database up and a fresh heartbeat", () => {
    const report = composeHealth(inputs({}));
    expect(report).toEqual({
      status: "ok",
      version: "0.1.0",
      database: { status: "ok", appliedMigrations: 3 },
      executor: "local",
      worker: {
        lastHeartbeatAt: "2026-03-01T11:59:30.000Z",
        workerId: "wrk_1",
        stale: false,
        sandbox: { kind: "bubblewrap", isolates: true, note: null },
      },
    });
    expect(healthHttpStatus(report)).toBe(200);
  });

  it("counts a beat exactly at the stale window's edge as fresh, one second later as stale", () => {
    expect(composeHealth(inputs({ heartbeat: beat(STALE_AFTER) })).status).toBe("ok");
    const stale = composeHealth(inputs({ heartbeat: beat(STALE_AFTER + 1) }));
    expect(stale.status).toBe("degraded");
    expect(stale.worker?.stale).toBe(true);
    expect(healthHttpStatus(stale)).toBe(200);
  });

  it("is degraded when no worker has ever beaten", () => {
    const report = composeHealth(inputs({ heartbeat: null }));
    expect(report.status).toBe("degraded");
    expect(report.worker).toBeNull();
  });

  it("treats a beat from the future (clock skew) as fresh", () => {
    expect(composeHealth(inputs({ heartbeat: beat(-5) })).worker?.stale).toBe(false);
  });

  it("is an error (503) when the database is down, whatever the worker says", () => {
    const report = composeHealth(inputs({ database: dbDown, heartbeat: null }));
    expect(report.status).toBe("error");
    expect(report.database.error).toContain("ECONNREFUSED");
    expect(healthHttpStatus(report)).toBe(503);
    expect(composeHealth(inputs({ database: dbDown })).status).toBe("error");
  });

  it("reports the configured executor", () => {
    expect(composeHealth(inputs({ executor: "inngest" })).executor).toBe("inngest");
  });
});
