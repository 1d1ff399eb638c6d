import type { RhumbatronConfig } from "@rhumbatron/core";
import type { Db } from "@rhumbatron/db";
import { markWorkerStopped, reapDeadWorkersOnHost, recordBeat } from "@rhumbatron/runtime";
import type { Logger } from "pino";
import type { WorkerIdentity } from "../identity.ts";
import type { DatabaseOutage } from "../outage.ts";
import type { FunctionContext, WorkerFunction } from "./types.ts";

export interface HeartbeatResult {
  workerId: string;
  beats: number;
  lastBeatAt: string;
}

/**
 * Records that this worker is alive. The process beats on a timer of its own (startBeating) every
 * config.worker.heartbeatSeconds; this function also beats on its cron and on a nudge, so the
 * health page sees a worker whichever executor runs it. The health endpoint calls the worker stale
 * when its latest beat is older than config.worker.heartbeatStaleSeconds, and other workers take
 * over its leases after config.worker.takeoverSeconds without a beat. A missed beat is replaced by
 * the next one, so it is not retried.
 */
export function heartbeatFunction(config: RhumbatronConfig): WorkerFunction {
  return {
    id: "heartbeat",
    triggers: { cron: config.worker.heartbeatCron, nudge: "heartbeat" },
    retries: 0,
    handler: ({ db, worker, now }: FunctionContext) => beat(db, worker, now()),
  };
}

async function beat(db: Db, worker: WorkerIdentity, at: Date): Promise<HeartbeatResult> {
  const row = await recordBeat(
    db,
    {
      workerId: worker.workerId,
      executor: worker.executor,
      hostname: worker.hostname,
      pid: worker.pid,
      version: worker.version,
      startedAt: worker.startedAt,
      sandboxKind: worker.sandbox?.kind ?? null,
      sandboxIsolates: worker.sandbox?.isolates ?? null,
      sandboxNote: worker.sandbox?.note ?? null,
      agentPrograms: worker.agentPrograms,
    },
    at,
  );
  return { workerId: worker.workerId, beats: row.beats, lastBeatAt: row.lastBeatAt.toISOString() };
}

/** True when a process with this pid runs on this host (signal 0 checks without sending anything). */
export function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, under another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export interface Beating {
  /** Earlier worker processes on this host found dead at start: their leases were freed. */
  reaped: string[];
  /** Stops the timer and marks this worker stopped, so what it still holds is free at once. */
  stop(): Promise<void>;
}

/**
 * The worker process's heartbeat: marks this host's dead earlier workers stopped (a restarted
 * worker picks up what its previous process held at once), beats now, then every
 * heartbeatSeconds. A failed beat is logged; the next one tries again.
 */
export async function startBeating(deps: {
  db: Db;
  config: RhumbatronConfig;
  worker: WorkerIdentity;
  now: () => Date;
  logger: Logger;
  isRunning?: (pid: number) => boolean;
  /** Where a failed beat is reported first (outage.ts): a database outage is one line, not one per beat. */
  outage?: DatabaseOutage;
}): Promise<Beating> {
  const { db, worker, now, logger, outage } = deps;
  const reaped = await reapDeadWorkersOnHost(db, worker, deps.isRunning ?? processRunning, now());
  if (reaped.length > 0) logger.info({ reaped }, "earlier worker processes on this host are gone; their work is free");
  await beat(db, worker, now());
  let beating: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    const began = outage?.now();
    beating = beat(db, worker, now()).then(
      () => began !== undefined && outage?.reached(began),
      (err: unknown) => {
        if (!outage?.failed(err))
          logger.warn({ error: err instanceof Error ? err.message : String(err) }, "heartbeat failed");
      },
    );
  }, deps.config.worker.heartbeatSeconds * 1000);
  timer.unref();
  return {
    reaped,
    async stop() {
      clearInterval(timer);
      await beating;
      await markWorkerStopped(db, worker.workerId, now());
    },
  };
}
