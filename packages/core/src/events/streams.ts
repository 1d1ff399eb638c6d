import type { RhumbatronConfig } from "../config.ts";
import { DomainError } from "../errors.ts";
import { fnv1a32 } from "./hash.ts";

/** One project always maps to one stream, so its Events stay in order there (docs/protocol.md, Streams). */
export function streamIndex(projectId: string, streamCount: number): number {
  if (!Number.isInteger(streamCount) || streamCount < 1) {
    throw new DomainError("INVALID_CONFIG", `stream count must be a positive integer, got ${streamCount}`);
  }
  return fnv1a32(projectId) % streamCount;
}

const STREAM_NAME = /^[A-Za-z0-9_]+$/;

/** `rhumbatron_events_NN_<env>`; stream names allow letters, digits and underscores only. */
export function streamName(index: number, env: string): string {
  const name = `rhumbatron_events_${String(index).padStart(2, "0")}_${env}`;
  if (!STREAM_NAME.test(name)) {
    throw new DomainError("INVALID_CONFIG", `stream name ${name} may contain only letters, digits and underscores`);
  }
  return name;
}

export function streamNames(config: RhumbatronConfig): string[] {
  return Array.from({ length: config.streams.count }, (_, i) => streamName(i, config.env));
}

/** The cron sweep visits one stream per minute: stream = minute-of-epoch mod stream count. */
export function streamForSweep(now: Date, streamCount: number): number {
  return Math.floor(now.getTime() / 60_000) % streamCount;
}
