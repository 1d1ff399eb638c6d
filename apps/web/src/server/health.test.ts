import type { DatabaseHealth, WorkerHealth } from "@rhumbatron/db";
import { describe, expect, it } from "vitest";
import { composeHealth, type HealthInputs, healthHttpStatus } from "./health.ts";

const now = new Date("2026-03-01T12:00:00.000Z");
const STALE_AFTER = 30;
const dbOk: DatabaseHealth = { status: "ok", appliedMigrations: 3 };
const dbDown: DatabaseHealth = { status: "error", error: "connection refused", failure: "down", appliedMigrations: 0 };

function beat(secondsAgo: number): WorkerHealth {
  return {
    workerId: "wrk_1",
    executor: "local",
    lastBeatAt: new Date(now.getTime() - secondsAgo * 1000),
    beats: 7,
    version: "0.1.0",
    sandbox: { kind: "bubblewrap", isolates: true, note: null },
    agentPrograms: [{ name: "codex", package: "@openai/codex", version: "0.171.0" }],
  };
}

const inputs = (over: Partial<HealthInputs>): HealthInputs => ({
  version: "0.1.0",
  database: dbOk,
  executor: "local",
  heartbeat: beat(10),
  now,
  heartbeatStaleSeconds: STALE_AFTER,
  databaseAt: "127.0.0.1:54329",
  embeddedDatabase: true,
  ...over,
});

describe("composeHealth", () => {
  it("is ok with the database up and a fresh heartbeat", () => {
    const report = composeHealth(inputs({}));
    expect(report).toEqual({
      status: "ok",
      problems: [],
      version: "0.1.0",
      database: { status: "ok", appliedMigrations: 3 },
      executor: "local",
      worker: {
        lastHeartbeatAt: "2026-03-01T11:59:50.000Z",
        workerId: "wrk_1",
        stale: false,
        sandbox: { kind: "bubblewrap", isolates: true, note: null },
        agentPrograms: [{ name: "codex", package: "@openai/codex", version: "0.171.0" }],
      },
    });
    expect(healthHttpStatus(report)).toBe(200);
  });

  it("counts a beat exactly at the stale window's edge as fresh, one second later as stale", () => {
    expect(composeHealth(inputs({ heartbeat: beat(STALE_AFTER) })).status).toBe("ok");
    const stale = composeHealth(inputs({ heartbeat: beat(STALE_AFTER + 1) }));
    expect(stale.status).toBe("unavailable");
    expect(stale.worker?.stale).toBe(true);
    expect(stale.problems).toEqual([
      `worker: stale, last heartbeat ${STALE_AFTER + 1} s ago (limit ${STALE_AFTER} s); background work is stopped until a worker runs again`,
    ]);
    expect(healthHttpStatus(stale)).toBe(503);
  });

  it("is unavailable (503) when no worker has ever beaten, and says to start one", () => {
    const report = composeHealth(inputs({ heartbeat: null }));
    expect(report.status).toBe("unavailable");
    expect(report.problems[0]).toMatch(/^worker: no worker has ever beaten/);
    expect(healthHttpStatus(report)).toBe(503);
    expect(report.worker).toBeNull();
  });

  it("treats a beat from the future (clock skew) as fresh", () => {
    expect(composeHealth(inputs({ heartbeat: beat(-5) })).worker?.stale).toBe(false);
  });

  it("is unavailable (503) when the database is down, whatever the worker says, and names it", () => {
    const report = composeHealth(inputs({ database: dbDown, heartbeat: null }));
    expect(report.status).toBe("unavailable");
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toBe(
      "database: the database at 127.0.0.1:54329 does not answer (connection refused); npm start restarts its embedded Postgres by itself — if it keeps failing, see the log",
    );
    expect(healthHttpStatus(report)).toBe(503);
    expect(composeHealth(inputs({ database: dbDown })).status).toBe("unavailable");
  });

  it("reports the configured executor", () => {
    expect(composeHealth(inputs({ executor: "inngest" })).executor).toBe("inngest");
  });

  it("names the server DATABASE_URL points at, and says to check it, only when the user set it", () => {
    const report = composeHealth(
      inputs({ database: dbDown, embeddedDatabase: false, databaseAt: "db.example.com:5432" }),
    );
    expect(report.problems).toEqual([
      "database: the database at db.example.com:5432 does not answer (connection refused); check that it runs and that DATABASE_URL names it",
    ]);
  });

  it("tells a refused login and a failed query from a server that does not answer", () => {
    const refused: DatabaseHealth = { ...dbDown, error: "the password was refused", failure: "refused" };
    expect(composeHealth(inputs({ database: refused })).problems).toEqual([
      "database: the database at 127.0.0.1:54329 refuses the connection (the password was refused); see the log of npm start",
    ]);
    const failed: DatabaseHealth = { ...dbDown, error: 'relation "x" does not exist', failure: "error" };
    expect(composeHealth(inputs({ database: failed, embeddedDatabase: false })).problems).toEqual([
      `database: the database at 127.0.0.1:54329 answered with an error (relation "x" does not exist); check DATABASE_URL and the server's log`,
    ]);
  });
});
