import { type Database as Db, raw, type Sql, sql } from "../sql.ts";

/**
 * Who holds a lease, and when a holder counts as dead.
 *
 * Every lease in the database (a queue message, a stream cursor, a workflow instance, an Agent run)
 * names the worker that holds it. Each worker process beats every worker.heartbeatSeconds; a lease
 * whose holder has not beaten for worker.takeoverSeconds, or whose holder stopped, is free for another
 * worker at once, whatever time the lease itself still has. Leases stay long (they cover the slowest
 * step), so a live holder is never interrupted, while a dead one's work resumes within seconds.
 */
export interface WorkerBeat {
  workerId: string;
  executor: string;
  hostname: string;
  pid: number;
  version: string;
  startedAt: Date;
  sandboxKind: string | null;
  sandboxIsolates: boolean | null;
  sandboxNote: string | null;
  /** The coding-agent programs it has installed (absent: it does not say). */
  agentPrograms?: AgentProgramReport[];
}

/** One coding-agent program a worker has: the name a program Agent uses, the package and version. */
export interface AgentProgramReport {
  name: string;
  package: string;
  version: string;
}

type HolderColumn = "lease_owner" | "runner_id" | "c.lease_owner";

/**
 * SQL condition: the row's holder (`column`) is a worker that stopped, or whose last beat is older
 * than `cutoff`. A holder with no heartbeat row (tests, tools) is never taken over this way; its
 * lease runs out as before. Nor is the claimer itself (`self`): a worker that claims is alive,
 * however late its last beat was written (a busy event loop, a slow database), and taking its own
 * lease this way would run one instance twice at once in two of its lanes. What it holds but no
 * longer works on it takes back by the orphan rule (working.ts), which knows what runs here.
 */
export function heldByDeadWorker(column: HolderColumn, cutoff: Date, self: string): Sql {
  return sql`${raw(column)} IN (
    SELECT worker_id FROM worker_heartbeats
    WHERE worker_id <> ${self} AND (stopped_at IS NOT NULL OR last_beat_at < ${cutoff}))`;
}

/** The instant before which a beat is too old: `now` minus worker.takeoverSeconds. */
export function takeoverCutoff(now: Date, takeoverSeconds: number): Date {
  return new Date(now.getTime() - takeoverSeconds * 1000);
}

/** One beat: one statement (INSERT … ON CONFLICT), so concurrent beats never lose an increment. */
export async function recordBeat(db: Db, beat: WorkerBeat, at: Date): Promise<{ beats: number; lastBeatAt: Date }> {
  const b = beat;
  // A beat that does not report its programs keeps the ones reported before.
  const programs = b.agentPrograms ? JSON.stringify(b.agentPrograms.map((p) => ({ ...p }))) : null;
  const [row] = await db.$queryRaw<{ beats: number; last_beat_at: Date }[]>`
    INSERT INTO worker_heartbeats (worker_id, executor, hostname, pid, version, started_at, sandbox_kind,
      sandbox_isolates, sandbox_note, agent_programs, last_beat_at, beats)
    VALUES (${b.workerId}, ${b.executor}, ${b.hostname}, ${b.pid}, ${b.version}, ${b.startedAt}, ${b.sandboxKind},
      ${b.sandboxIsolates}, ${b.sandboxNote}, ${programs}::jsonb, ${at}, 1)
    ON CONFLICT (worker_id) DO UPDATE SET executor = EXCLUDED.executor, hostname = EXCLUDED.hostname,
      pid = EXCLUDED.pid, version = EXCLUDED.version, started_at = EXCLUDED.started_at,
      sandbox_kind = EXCLUDED.sandbox_kind, sandbox_isolates = EXCLUDED.sandbox_isolates,
      sandbox_note = EXCLUDED.sandbox_note,
      agent_programs = COALESCE(EXCLUDED.agent_programs, worker_heartbeats.agent_programs),
      last_beat_at = EXCLUDED.last_beat_at, beats = worker_heartbeats.beats + 1
    RETURNING beats, last_beat_at`;
  if (!row) throw new Error(`heartbeat of ${b.workerId} was not written`);
  return { beats: row.beats, lastBeatAt: row.last_beat_at };
}

/** A worker that stops cleanly says so: whatever it still holds is free at once. */
export async function markWorkerStopped(db: Db, workerId: string, at: Date): Promise<void> {
  await db.$executeRaw`UPDATE worker_heartbeats SET stopped_at = ${at} WHERE worker_id = ${workerId} AND stopped_at IS NULL`;
}

/**
 * A worker starting on a host marks that host's earlier worker processes stopped when they are no
 * longer running (`isRunning(pid)` false), or when they had this very pid (a container restarted:
 * every start is pid 1). What they held is then free for the new process at once. Returns their IDs.
 */
export async function reapDeadWorkersOnHost(
  db: Db,
  self: { workerId: string; hostname: string; pid: number },
  isRunning: (pid: number) => boolean,
  at: Date,
): Promise<string[]> {
  const rows = await db.$queryRaw<{ worker_id: string; pid: number }[]>`
    SELECT worker_id, pid FROM worker_heartbeats
    WHERE hostname = ${self.hostname} AND stopped_at IS NULL AND worker_id <> ${self.workerId}`;
  const dead = rows.filter((r) => r.pid === self.pid || !isRunning(r.pid)).map((r) => r.worker_id);
  if (dead.length > 0) {
    await db.$executeRaw`
      UPDATE worker_heartbeats SET stopped_at = ${at} WHERE worker_id = ANY(${dead}) AND stopped_at IS NULL`;
  }
  return dead;
}
