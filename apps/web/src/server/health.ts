import type { DatabaseHealth, WorkerHealth } from "@rhumbatron/db";

/** The body of GET /api/health. */
export interface HealthReport {
  /** "ok" (200), or "unavailable" (503): `problems` names what is wrong and what to do. */
  status: "ok" | "unavailable";
  problems: string[];
  version: string;
  database: DatabaseHealth;
  executor: string;
  worker: {
    lastHeartbeatAt: string;
    workerId: string;
    stale: boolean;
    /** Whether agent and check commands are isolated, and what to do when they are not. */
    sandbox: WorkerHealth["sandbox"];
    /** The coding-agent programs it has, and their versions (what a program Agent can be). */
    agentPrograms: WorkerHealth["agentPrograms"];
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
  /** The database's `host:port` (databaseAddress: never the user or password). */
  databaseAt: string;
  /** Whether it is `npm start`'s embedded Postgres (RHUMBATRON_EMBEDDED_DB), which npm start restarts by itself. */
  embeddedDatabase: boolean;
}

/** The database's problem line: what is wrong in words, and what to do. */
export function databaseProblem(inputs: Pick<HealthInputs, "database" | "databaseAt" | "embeddedDatabase">): string {
  const { database, databaseAt, embeddedDatabase } = inputs;
  const error = database.error ?? "no answer";
  const what =
    database.failure === "down"
      ? `does not answer (${error})`
      : database.failure === "refused"
        ? `refuses the connection (${error})`
        : `answered with an error (${error})`;
  const todo = embeddedDatabase
    ? database.failure === "down"
      ? "npm start restarts its embedded Postgres by itself — if it keeps failing, see the log"
      : "see the log of npm start"
    : database.failure === "down"
      ? "check that it runs and that DATABASE_URL names it"
      : "check DATABASE_URL and the server's log";
  return `database: the database at ${databaseAt} ${what}; ${todo}`;
}

/**
 * Pure: the health report from what was measured. "unavailable" (served as 503) when the database
 * is down, or when no worker has beaten within the stale window (then background work, publishing,
 * consumers and workflows, is not running); each cause is one line of `problems`. "ok" otherwise.
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
        agentPrograms: heartbeat.agentPrograms,
      }
    : null;
  const problems: string[] = [];
  if (inputs.database.status !== "ok") {
    problems.push(databaseProblem(inputs));
  } else if (!worker) {
    problems.push("worker: no worker has ever beaten; start it (npm start starts it with the web app)");
  } else if (worker.stale) {
    const ago = Math.round((inputs.now.getTime() - new Date(worker.lastHeartbeatAt).getTime()) / 1000);
    problems.push(
      `worker: stale, last heartbeat ${ago} s ago (limit ${inputs.heartbeatStaleSeconds} s); background work is stopped until a worker runs again`,
    );
  }
  return {
    status: problems.length === 0 ? "ok" : "unavailable",
    problems,
    version: inputs.version,
    database: inputs.database,
    executor: inputs.executor,
    worker,
  };
}

export function healthHttpStatus(report: HealthReport): number {
  return report.status === "ok" ? 200 : 503;
}
