import type { DatabaseHealth, WorkerHealth } from "@rhumbatron/db";
import { databaseHealth, latestWorkerHeartbeat } from "@rhumbatron/db";
import { getDb } from "../../../server/db.ts";
import { composeHealth, healthHttpStatus } from "../../../server/health.ts";
import { serverConfig, serverSettings } from "../../../server/settings.ts";
import { VERSION } from "../../../server/version.ts";

// Measured on every request: never prerendered, never cached.
export const dynamic = "force-dynamic";

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export async function GET(): Promise<Response> {
  const settings = serverSettings();
  let database: DatabaseHealth;
  let heartbeat: WorkerHealth | null = null;
  try {
    const db = getDb();
    database = await databaseHealth(db);
    // An unmigrated database has no heartbeat table yet: that is "no worker", not a failed probe.
    if (database.status === "ok") heartbeat = await latestWorkerHeartbeat(db).catch(() => null);
  } catch (err) {
    database = { status: "error", error: message(err), appliedMigrations: 0 };
  }
  const report = composeHealth({
    version: VERSION,
    database,
    executor: settings.RHUMBATRON_EXECUTOR,
    heartbeat,
    now: new Date(),
    heartbeatStaleSeconds: serverConfig().worker.heartbeatStaleSeconds,
  });
  return Response.json(report, { status: healthHttpStatus(report), headers: { "cache-control": "no-store" } });
}
