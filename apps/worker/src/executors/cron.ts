import { Cron } from "croner";

/** Timer functions, injectable so tests drive the schedule without waiting. */
export interface Timers {
  now(): Date;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  now: () => new Date(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** setTimeout overflows past 2^31-1 ms (about 24.8 days); longer waits are split. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The first time strictly after `now` that a five-field cron expression matches, in UTC (as
 * Inngest evaluates crons). Day-of-month and day-of-week combine with OR, as in classic cron.
 */
export function nextCronRun(expression: string, now: Date): Date {
  const next = new Cron(expression, { timezone: "UTC", mode: "5-part", paused: true }).nextRun(now);
  if (!next) throw new Error(`cron expression "${expression}" never matches after ${now.toISOString()}`);
  return next;
}

/**
 * Calls `onTick` at every match of `expression`, computed with croner from `timers.now()`. A timer
 * that fires early only re-arms; a tick that fires late still runs once, and the next one is
 * computed from the current time, so a stalled process never causes a burst of catch-up runs.
 */
export class CronSchedule {
  private handle: unknown;
  private stopped = false;

  constructor(
    private readonly expression: string,
    private readonly onTick: () => void,
    private readonly timers: Timers = systemTimers,
  ) {
    nextCronRun(expression, timers.now()); // validate now, not at the first tick
  }

  start(): void {
    this.arm(nextCronRun(this.expression, this.timers.now()));
  }

  stop(): void {
    this.stopped = true;
    if (this.handle !== undefined) this.timers.clearTimeout(this.handle);
    this.handle = undefined;
  }

  private arm(due: Date): void {
    if (this.stopped) return;
    const wait = Math.min(Math.max(due.getTime() - this.timers.now().getTime(), 0), MAX_TIMER_MS);
    this.handle = this.timers.setTimeout(() => this.fire(due), wait);
  }

  private fire(due: Date): void {
    if (this.stopped) return;
    const now = this.timers.now();
    if (now < due) {
      this.arm(due);
      return;
    }
    this.onTick();
    const after = now > due ? now : due;
    this.arm(nextCronRun(this.expression, after));
  }
}
