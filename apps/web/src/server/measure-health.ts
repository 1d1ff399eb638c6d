import type { DatabaseHealth, WorkerHealth } from "@rhumbatron/db";
import { databaseAddress, databaseHealth, failedDatabaseHealth, latestWorkerHeartbeat } from "@rhumbatron/db";
import { getDb } from "./db.ts";
import { composeHealth, type HealthReport } from "./health.ts";
import { serverConfig, serverSettings } from "./settings.ts";
import { VERSION } from "./version.ts";

/** Measures the database and the newest worker heartbeat now: GET /api/health and the operations page. */
export async function measureHealth(): Promise<HealthReport> {
  const settings = serverSettings();
  let database: DatabaseHealth;
  let heartbeat: WorkerHealth | null = null;
  try {
    const db = getDb();
    database = await databaseHealth(db);
    // An unmigrated database has no heartbeat table yet: that is "no worker", not a failed probe.
    if (database.status === "ok") heartbeat = await latestWorkerHeartbeat(db).catch(() => null);
  } catch (err) {
    database = failedDatabaseHealth(err);
  }
  return composeHealth({
    version: VERSION,
    database,
    executor: settings.RHUMBATRON_EXECUTOR,
    heartbeat,
    now: new Date(),
    heartbeatStaleSeconds: serverConfig().worker.heartbeatStaleSeconds,
    databaseAt: settings.DATABASE_URL ? databaseAddress(settings.DATABASE_URL) : "(DATABASE_URL is not set)",
    embeddedDatabase: settings.RHUMBATRON_EMBEDDED_DB,
  });
}
