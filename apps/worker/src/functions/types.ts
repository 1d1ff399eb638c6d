import type { RhumbatronConfig } from "@rhumbatron/core";
import type { Db } from "@rhumbatron/db";
import type { Logger } from "pino";
import type { WorkerIdentity } from "../identity.ts";
import type { DatabaseOutage } from "../outage.ts";

/** What started a run; logged with every run. */
export type RunTrigger = "cron" | "nudge" | "start" | "manual";

/**
 * The run key scopes single-flight: at most one run per function and key at a time. A nudge's
 * payload, when given, is its key (for example a project id), so one project's work never waits
 * behind another's. Cron and start runs, and nudges without a payload, use this key.
 */
export const DEFAULT_RUN_KEY = "default";

export interface FunctionContext {
  db: Db;
  config: RhumbatronConfig;
  /** A child logger already bound to this run's function, trigger and key. */
  logger: Logger;
  /** The clock; injected so tests can fix time. */
  now(): Date;
  key: string;
  trigger: RunTrigger;
  /** The worker process running this function. */
  worker: WorkerIdentity;
  /** Where a failure the function logs itself is reported first (outage.ts); absent in tests. */
  outage?: DatabaseOutage;
}

/**
 * One background function. Every function is an idempotent drain or step over Postgres state
 * (ARCHITECTURE.md, "Executors: one set of functions, two drivers"), so either executor may run it again at any time.
 */
export interface WorkerFunction {
  id: string;
  triggers: {
    /** Five-field cron expression, evaluated in UTC. */
    cron?: string;
    /** Bare nudge channel (see @rhumbatron/db nudge.ts); the writing side nudges it on commit. */
    nudge?: string;
  };
  /** Retries (0..20) Inngest makes after a failed run; the local executor relies on the next trigger instead. */
  retries: number;
  /** Returns a JSON-serialisable summary (Inngest memoises it as the step's result). */
  handler(ctx: FunctionContext): Promise<unknown>;
}
