import type { Settings } from "@rhumbatron/core";
import { afterCommitNudger, type Nudger, nudgeEventName, pgNotifyNudger } from "@rhumbatron/db";
import { Inngest } from "inngest";

/**
 * How the web server wakes the worker after a write commits: pg_notify for the local executor, an
 * Inngest event after commit for the inngest executor (the worker's cron is the backstop either way).
 */
let cached: Nudger | undefined;

export function webNudger(settings: Settings): Nudger {
  if (settings.RHUMBATRON_EXECUTOR === "local") return pgNotifyNudger;
  if (!cached) {
    const dev = settings.INNGEST_DEV;
    const isDev = dev !== undefined && !/^(0|false|no|off)$/i.test(dev);
    const client = new Inngest({
      id: "rhumbatron",
      isDev,
      ...(settings.INNGEST_BASE_URL ? { baseUrl: settings.INNGEST_BASE_URL } : {}),
      ...(settings.INNGEST_EVENT_KEY ? { eventKey: settings.INNGEST_EVENT_KEY } : {}),
    });
    cached = afterCommitNudger(async (channel, payload) => {
      await client.send({ name: nudgeEventName(channel), data: payload ? { key: payload } : {} });
    });
  }
  return cached;
}
