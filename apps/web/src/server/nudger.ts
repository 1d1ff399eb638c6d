import type { Settings } from "@rhumbatron/core";
import type { Nudger } from "@rhumbatron/runtime";
import { nudgerFor } from "@rhumbatron/worker/nudger";

/**
 * How the web server wakes the worker after a write commits: the worker's own nudger for the
 * configured executor (pg_notify for the local executor, an Inngest event after commit for the
 * inngest executor; the worker's cron is the backstop either way). One per process, so one
 * Inngest client.
 */
let cached: Nudger | undefined;

export function webNudger(settings: Settings): Nudger {
  cached ??= nudgerFor(settings);
  return cached;
}
