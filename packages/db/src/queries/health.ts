import type { AgentProgramReport } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { countAppliedMigrations } from "../migrate.ts";
import { databaseErrorText, unreachable } from "../reachability.ts";

export interface DatabaseHealth {
  status: "ok" | "error";
  /** In words, never the driver's output: why the server does not answer, or the error it answered with. */
  error?: string;
  /**
   * With status "error": "down" when the server does not answer, "refused" when it answers but
   * refuses the connection (a password, a database name), "error" when a query failed.
   */
  failure?: "down" | "refused" | "error";
  appliedMigrations: number;
}

/** The health of a database that failed with `err`. */
export function failedDatabaseHealth(err: unknown): DatabaseHealth {
  const why = unreachable(err);
  if (why)
    return { status: "error", error: why.reason, failure: why.answered ? "refused" : "down", appliedMigrations: 0 };
  return { status: "error", error: databaseErrorText(err), failure: "error", appliedMigrations: 0 };
}

export interface WorkerHealth {
  workerId: string;
  executor: string;
  lastBeatAt: Date;
  beats: number;
  version: string;
  /** The worker's Sandbox, as it reported it; null for a worker that runs none. */
  sandbox: { kind: string; isolates: boolean; note: string | null } | null;
  /** The coding-agent programs it has, with their versions (a program Agent needs its program there). */
  agentPrograms: AgentProgramReport[];
}

/** Database reachability and migration count; never throws (the health endpoint reports instead). */
export async function databaseHealth(db: Db): Promise<DatabaseHealth> {
  try {
    const appliedMigrations = await countAppliedMigrations((sql) => db.$queryRawUnsafe<{ n: number }[]>(sql));
    return { status: "ok", appliedMigrations };
  } catch (err) {
    return failedDatabaseHealth(err);
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
    agentPrograms: agentProgramReports(row.agentPrograms),
  };
}

/** The heartbeat's agent_programs column read back: only well-formed entries. */
function agentProgramReports(value: unknown): AgentProgramReport[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((v) => {
    const o = v as Record<string, unknown> | null;
    return o && typeof o.name === "string" && typeof o.package === "string" && typeof o.version === "string"
      ? [{ name: o.name, package: o.package, version: o.version }]
      : [];
  });
}
