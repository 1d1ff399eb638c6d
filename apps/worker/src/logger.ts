import type { Settings } from "@rhumbatron/core";
import { type DestinationStream, type Logger, pino } from "pino";

export type { Logger } from "pino";

/** JSON lines on stdout (or `destination`, for tests), one per unit of work. */
export function createLogger(level: Settings["RHUMBATRON_LOG_LEVEL"], destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: "rhumbatron-worker" },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  // Written synchronously: the worker's last line before it exits (why it could not stop cleanly,
  // say) must reach stdout, and pino's flush at exit of a buffered stream gives up on a full pipe.
  return pino(options, destination ?? pino.destination({ dest: 1, sync: true }));
}
