import { DomainError } from "@rhumbatron/core";
import { checkRegistry } from "../functions/index.ts";
import { DEFAULT_RUN_KEY, type RunTrigger, type WorkerFunction } from "../functions/types.ts";
import { CronSchedule, systemTimers, type Timers } from "./cron.ts";
import { type Backoff, NudgeListener } from "./nudge-listener.ts";
import { type RunDeps, type RunRecord, runFunction } from "./run.ts";
import { SingleFlight } from "./single-flight.ts";
import type { Executor } from "./types.ts";

export interface LocalExecutorOptions extends RunDeps {
  /** For the dedicated LISTEN connection. */
  databaseUrl: string;
  functions: WorkerFunction[];
  /** Drives cron schedules; defaults to the system clock and timers. */
  timers?: Timers;
  listenerBackoff?: Backoff;
}

const DEFAULT_LISTENER_BACKOFF: Backoff = { minMs: 500, maxMs: 30_000 };

/**
 * The embedded executor: runs the functions from cron timers and Postgres LISTEN/NOTIFY nudges in
 * this process, with no Inngest server. Every function also runs once at start, to catch up on
 * anything missed while the worker was down (each is an idempotent drain, so this is safe).
 */
export class LocalExecutor implements Executor {
  readonly kind = "local" as const;
  private readonly runs: SingleFlight;
  private readonly schedules: CronSchedule[];
  private readonly listener: NudgeListener | undefined;
  private readonly byId: Map<string, WorkerFunction>;

  constructor(private readonly options: LocalExecutorOptions) {
    const { logger } = options;
    const functions = checkRegistry(options.functions);
    this.byId = new Map(functions.map((fn) => [fn.id, fn]));
    this.runs = new SingleFlight(async (fn, key, trigger) => (await runFunction(fn, options, key, trigger)).record);
    this.schedules = functions.flatMap((fn) => {
      const cron = fn.triggers.cron;
      return cron
        ? [new CronSchedule(cron, () => this.fire(fn, DEFAULT_RUN_KEY, "cron"), options.timers ?? systemTimers)]
        : [];
    });
    const channels = [...new Set(functions.flatMap((fn) => (fn.triggers.nudge ? [fn.triggers.nudge] : [])))];
    this.listener =
      channels.length === 0
        ? undefined
        : new NudgeListener({
            databaseUrl: options.databaseUrl,
            channels,
            logger,
            backoff: options.listenerBackoff ?? DEFAULT_LISTENER_BACKOFF,
            ...(options.outage ? { outage: options.outage } : {}),
            onNudge: (channel, payload) => this.onNudge(channel, payload ?? DEFAULT_RUN_KEY),
            // Nudges sent while disconnected are lost: drain every nudged function once.
            onReconnect: () => {
              for (const fn of functions) if (fn.triggers.nudge) this.fire(fn, DEFAULT_RUN_KEY, "nudge");
            },
          });
  }

  async start(): Promise<void> {
    // Listen first, so a nudge committed during the start runs is not missed.
    await this.listener?.start();
    for (const fn of this.options.functions) this.fire(fn, DEFAULT_RUN_KEY, "start");
    for (const schedule of this.schedules) schedule.start();
  }

  async stop(): Promise<void> {
    for (const schedule of this.schedules) schedule.stop();
    await this.listener?.stop();
    await this.runs.close();
  }

  /** Runs a function now (coalesced with a run in flight for the same key) and returns its record. */
  runNow(functionId: string, key: string = DEFAULT_RUN_KEY): Promise<RunRecord> {
    const fn = this.byId.get(functionId);
    if (!fn) return Promise.reject(new DomainError("NOT_FOUND", `no worker function "${functionId}"`));
    return this.runs.request(fn, key, "manual");
  }

  /** Resolves when no run is in flight; for tests and orderly shutdown. */
  idle(): Promise<void> {
    return this.runs.idle();
  }

  private onNudge(channel: string, key: string): void {
    this.options.logger.debug({ channel, key }, "nudge received");
    for (const fn of this.options.functions) if (fn.triggers.nudge === channel) this.fire(fn, key, "nudge");
  }

  /** Fire and forget: the run logs its own outcome; a refusal while stopping needs no handling. */
  private fire(fn: WorkerFunction, key: string, trigger: RunTrigger): void {
    this.runs.request(fn, key, trigger).catch(() => {});
  }
}

export function createLocalExecutor(options: LocalExecutorOptions): LocalExecutor {
  return new LocalExecutor(options);
}
