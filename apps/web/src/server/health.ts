import type { DatabaseHealth, WorkerHealth } from "@rhumbatron/db";

/** The body of GET /api/health. */
export interface HealthReport {
  status: "ok" | "degraded" | "error";
  version: string;
  database: DatabaseHealth;
  executor: string;
  worker: {
    lastHeartbeatAt: string;
    workerId: string;
    stale: boolean;
    /** Whether agent and check commands are isolated, and what to do when they are not. */
    sandbox: WorkerHealth["sandbox"];
  } | null;
}

export interface HealthInputs {
  version: string;
  database: DatabaseHealth;
  executor: string;
  heartbeat: WorkerHealth | null;
  now: Date;
  /** config.worker.heartbeatStaleSeconds */
  heartbeatStaleSeconds: number;
}

/**
 * Pure: the health report from what was measured. "error" (served as 503) when the database is down;
 * "degraded" when it is up but no worker has beaten within the stale window, so background work
 * (publishing, consumers, workflows) is not running; "ok" otherwise.
 */
export function composeHealth(inputs: HealthInputs): HealthReport {
  const { heartbeat } = inputs;
  const worker = heartbeat
    ? {
        lastHeartbeatAt: heartbeat.lastBeatAt.toISOString(),
        workerId: heartbeat.workerId,
        // A beat exactly at the window's edge still counts; a beat from the future (clock skew) is fresh.
        stale: inputs.now.getTime() - heartbeat.lastBeatAt.getTime() > inputs.heartbeatStaleSeconds * 1000,
        sandbox: heartbeat.sandbox,
      }
    : null;
  let status: HealthReport["status"] = "ok";
  if (inputs.database.status !== "ok") status = "error";
  else if (!worker || worker.stale) status = "degraded";
  return { status, version: inputs.version, database: inputs.database, executor: inputs.executor, worker };
}

export function healthHttpStatus(report: HealthReport): number {
  return report.status === "error" ? 503 : 200;
}
