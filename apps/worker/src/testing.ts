import { loadConfig } from "@rhumbatron/core";
import type { Logger } from "pino";
import { type WorkerIdentity, workerIdentity } from "./identity.ts";
import { createLogger } from "./logger.ts";

/** Test support only: a logger whose JSON lines tests can read and wait for. */
export interface CapturedLogs {
  logger: Logger;
  lines: Record<string, unknown>[];
  /** Resolves with the first line (already logged or yet to come) matching `match`. */
  waitFor(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  runs(fnId?: string): Record<string, unknown>[];
}

export function captureLogs(): CapturedLogs {
  const lines: Record<string, unknown>[] = [];
  const waiters: { match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] =
    [];
  const logger = createLogger("debug", {
    write(chunk: string) {
      const line = JSON.parse(chunk) as Record<string, unknown>;
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.match(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    },
  });
  return {
    logger,
    lines,
    waitFor(match) {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    runs: (fnId) => lines.filter((l) => "outcome" in l && (fnId === undefined || l.function === fnId)),
  };
}

export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A clock tests move by hand. */
export function manualClock(start: string) {
  let now = new Date(start);
  return {
    now: () => new Date(now),
    set(iso: string) {
      now = new Date(iso);
    },
  };
}

export const testConfig = loadConfig("dev");

export function testIdentity(executor: WorkerIdentity["executor"] = "local"): WorkerIdentity {
  return workerIdentity(executor, new Date("2030-01-01T00:00:00.000Z"));
}

/**
 * A local executor on a test database, driven by nudges only (its cron timers never fire, so a
 * minute boundary cannot add a run). Started and idle when the promise resolves; stop it after.
 */
export async function startNudgeOnlyExecutor(o: {
  db: import("@rhumbatron/db").Db;
  databaseUrl: string;
  functions: import("./functions/types.ts").WorkerFunction[];
  logs: CapturedLogs;
  config?: import("@rhumbatron/core").RhumbatronConfig;
}) {
  const { createLocalExecutor } = await import("./executors/local.ts");
  const executor = createLocalExecutor({
    db: o.db,
    databaseUrl: o.databaseUrl,
    config: o.config ?? testConfig,
    logger: o.logs.logger,
    worker: testIdentity(),
    now: () => new Date(),
    functions: o.functions,
    timers: { now: () => new Date(), setTimeout: () => 0, clearTimeout: () => {} },
  });
  await executor.start();
  await executor.idle();
  return executor;
}

/** Whether any process's command line still contains `sleep <marker>` (after a short settle). */
export async function sleepStillRunning(marker: string): Promise<boolean> {
  await new Promise((res) => setTimeout(res, 200));
  const { execFileSync } = await import("node:child_process");
  return execFileSync("ps", ["-eo", "args"]).toString().includes(`sleep ${marker}`);
}
