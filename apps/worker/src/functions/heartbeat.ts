import type { RhumbatronConfig } from "@rhumbatron/core";
import type { FunctionContext, WorkerFunction } from "./types.ts";

export interface HeartbeatResult {
  workerId: string;
  beats: number;
  lastBeatAt: string;
}

/**
 * Records that this worker is alive: the web health page calls the worker stale when its latest
 * beat is older than config.worker.heartbeatStaleSeconds. A missed beat is replaced by the next
 * tick, so it is not retried.
 */
export function heartbeatFunction(config: RhumbatronConfig): WorkerFunction {
  return {
    id: "heartbeat",
    triggers: { cron: config.worker.heartbeatCron, nudge: "heartbeat" },
    retries: 0,
    handler: beat,
  };
}

async function beat({ db, worker, now }: FunctionContext): Promise<HeartbeatResult> {
  const at = now();
  const identity = {
    executor: worker.executor,
    hostname: worker.hostname,
    pid: worker.pid,
    version: worker.version,
    startedAt: worker.startedAt,
    sandboxKind: worker.sandbox?.kind ?? null,
    sandboxIsolates: worker.sandbox?.isolates ?? null,
    sandboxNote: worker.sandbox?.note ?? null,
  };
  // One statement (INSERT … ON CONFLICT), so concurrent beats never lose an increment.
  const row = await db.workerHeartbeat.upsert({
    where: { workerId: worker.workerId },
    create: { workerId: worker.workerId, ...identity, lastBeatAt: at, beats: 1 },
    update: { ...identity, lastBeatAt: at, beats: { increment: 1 } },
  });
  return { workerId: row.workerId, beats: row.beats, lastBeatAt: row.lastBeatAt.toISOString() };
}
