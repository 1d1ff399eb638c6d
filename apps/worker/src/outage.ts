import { performance } from "node:perf_hooks";
import { unreachable } from "@rhumbatron/db";
import type { Logger } from "pino";

/**
 * The worker's one account of whether the database answers. Every loop (the executors' runs, the
 * heartbeat timer, the nudge listener, a function's own fallbacks) reports its failures here: an
 * error that means the database cannot be reached (packages/db/src/reachability.ts) is logged once
 * when the outage starts, and once more when an operation begun after that start reaches the
 * database again; the loop itself says nothing about it. Any other error is the loop's to log, as
 * before. The loops retry on their own schedules; nothing here waits or retries.
 */
export class DatabaseOutage {
  private since: number | null = null;

  constructor(
    private readonly options: {
      logger: Logger;
      /** `host:port` of the database (databaseAddress), for the lines. */
      databaseAt: string;
      /** A monotonic clock in ms. */
      clock?: () => number;
    },
  ) {}

  /** Now on the tracker's clock: what an operation passes to reached() when it ends well. */
  now(): number {
    return this.options.clock ? this.options.clock() : performance.now();
  }

  get active(): boolean {
    return this.since !== null;
  }

  /**
   * An operation failed with `err`. True when that is the database being unreachable: it is taken
   * care of (one line per outage) and the caller logs nothing; false for any other error.
   * `fromConnection`: the error came from a pg connection of the caller's own (its socket errors
   * are the database's).
   */
  failed(err: unknown, options: { fromConnection?: boolean } = {}): boolean {
    const why = unreachable(err, options);
    if (!why) return false;
    if (this.since === null) {
      this.since = this.now();
      const { databaseAt } = this.options;
      const what = why.answered ? "refuses the connection" : "does not answer";
      this.options.logger.warn(
        { database: databaseAt, reason: why.reason },
        `database unreachable: the database at ${databaseAt} ${what} (${why.reason}), retrying`,
      );
    } else this.options.logger.debug({ reason: why.reason }, "database still unreachable");
    return true;
  }

  /**
   * An operation begun at `startedAt` (now()) reached the database. True when that ended an outage
   * (and said so). One begun before the outage started proves nothing and is ignored.
   */
  reached(startedAt: number): boolean {
    if (this.since === null || startedAt < this.since) return false;
    const seconds = Math.round((this.now() - this.since) / 1000);
    this.since = null;
    this.options.logger.info(
      { database: this.options.databaseAt, downSeconds: seconds },
      `database reachable again after ${seconds} s`,
    );
    return true;
  }
}
