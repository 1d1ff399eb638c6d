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
