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
  return destination ? pino(options, destination) : pino(options);
}
