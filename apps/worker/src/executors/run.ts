import { performance } from "node:perf_hooks";
import type { WorkerContext } from "../context.ts";
import type { RunTrigger, WorkerFunction } from "../functions/types.ts";

/** What both executors hand to every run. */
export type RunDeps = Pick<WorkerContext, "db" | "config" | "logger" | "worker" | "now"> &
  Partial<Pick<WorkerContext, "outage">>;

/** The one structured line logged per run. */
export interface RunRecord {
  function: string;
  trigger: RunTrigger;
  key: string;
  durationMs: number;
  outcome: "ok" | "error";
  error?: string;
}

export interface RunOutcome {
  record: RunRecord;
  result?: unknown;
  /** The thrown value, kept so the Inngest executor can rethrow it (and so retry) unchanged. */
  failure?: unknown;
}

/** Runs one function once, never throws, and logs exactly one line about it. */
export async function runFunction(
  fn: WorkerFunction,
  deps: RunDeps,
  key: string,
  trigger: RunTrigger,
): Promise<RunOutcome> {
  const logger = deps.logger.child({ function: fn.id, trigger, key });
  // Monotonic clock for durations; the injected `now` is domain time and may be fixed in tests.
  const started = performance.now();
  const outage = deps.outage;
  const began = outage?.now();
  let outcome: Omit<RunOutcome, "record">;
  try {
    outcome = {
      result: await fn.handler({
        db: deps.db,
        config: deps.config,
        logger,
        now: deps.now,
        key,
        trigger,
        worker: deps.worker,
        ...(outage ? { outage } : {}),
      }),
    };
  } catch (failure) {
    outcome = { failure };
  }
  const durationMs = Math.round(performance.now() - started);
  const record: RunRecord =
    "failure" in outcome
      ? { function: fn.id, trigger, key, durationMs, outcome: "error", error: errorMessage(outcome.failure) }
      : { function: fn.id, trigger, key, durationMs, outcome: "ok" };
  // A finished run is routine (every tick has several): debug. What it did worth telling is logged by
  // the function itself at info; a failure always shows, but a database outage only once (outage.ts).
  if (record.outcome === "ok") {
    if (began !== undefined) outage?.reached(began);
    deps.logger.debug(record, "run finished");
  } else if ("failure" in outcome && outage?.failed(outcome.failure)) deps.logger.debug(record, "run failed");
  else deps.logger.error(record, "run failed");
  return { record, ...outcome };
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
