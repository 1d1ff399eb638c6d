import type { Db } from "../client.ts";
import { countAppliedMigrations } from "../migrate.ts";

export interface DatabaseHealth {
  status: "ok" | "error";
  error?: string;
  appliedMigrations: number;
}

export interface WorkerHealth {
  workerId: string;
  executor: string;
  lastBeatAt: Date;
  beats: number;
  version: string;
  /** The worker's Sandbox, as it reported it; null for a worker that runs none. */
  sandbox: { kind: string; isolates: boolean; note: string | null } | null;
}

/** Database reachability and migration count; never throws (the health endpoint reports instead). */
export async function databaseHealth(db: Db): Promise<DatabaseHealth> {
  try {
    const appliedMigrations = await countAppliedMigrations((sql) => db.$queryRawUnsafe<{ n: number }[]>(sql));
    return { status: "ok", appliedMigrations };
  } catch (err) {
    return { status: "error", error: err instanceof Error ? err.message : String(err), appliedMigrations: 0 };
  }
}

/** The most recent worker heartbeat, if any worker has ever beaten. */
export async function latestWorkerHeartbeat(db: Db): Promise<WorkerHealth | null> {
  const row = await db.workerHeartbeat.findFirst({ orderBy: { lastBeatAt: "desc" } });
  if (!row) return null;
  return {
    workerId: row.workerId,
    executor: row.executor,
    lastBeatAt: row.lastBeatAt,
    beats: row.beats,
    version: row.version,
    sandbox:
      row.sandboxKind === null
        ? null
        : { kind: row.sandboxKind, isolates: row.sandboxIsolates ?? false, note: row.sandboxNote },
  };
}
