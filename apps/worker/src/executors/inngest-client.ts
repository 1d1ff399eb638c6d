import type { Settings } from "@rhumbatron/core";
import { nudgeEventName } from "@rhumbatron/runtime";
import { Inngest } from "inngest";
import type { Logger } from "pino";

/**
 * The one Inngest client of a process and the nudge sender built on it, apart from the executor so
 * the web server's nudger can use them without loading the worker's functions.
 */
export const INNGEST_APP_ID = "rhumbatron";
export const INNGEST_PATH = "/api/inngest";
/**
 * With RHUMBATRON_FUNCTION_HOST=split the web app and the worker host are two Inngest apps (each
 * synced from its own URL); nudge events reach functions in either.
 */
export const INNGEST_SPLIT_APP_IDS = { web: "rhumbatron-web", worker: "rhumbatron-worker" } as const;

export type InngestSettings = Pick<
  Settings,
  "INNGEST_EVENT_KEY" | "INNGEST_SIGNING_KEY" | "INNGEST_BASE_URL" | "INNGEST_DEV" | "RHUMBATRON_WORKER_PORT"
>;

export { nudgeEventName };

/**
 * INNGEST_DEV follows the SDK's convention: "1"/"true" for a local dev server, or its URL.
 * Unset means cloud mode, where the serve handler refuses requests without a valid signature.
 */
function devMode(value: string | undefined): { isDev: boolean; devUrl?: string } {
  if (value === undefined) return { isDev: false };
  if (/^(1|true|yes|on)$/i.test(value)) return { isDev: true };
  if (/^(0|false|no|off)$/i.test(value)) return { isDev: false };
  return { isDev: true, devUrl: value };
}

/** One client per process, configured from settings rather than read from process.env behind our back. */
export function createInngestClient(
  settings: Omit<InngestSettings, "RHUMBATRON_WORKER_PORT">,
  logger?: Logger,
  appId: string = INNGEST_APP_ID,
): Inngest {
  const { isDev, devUrl } = devMode(settings.INNGEST_DEV);
  const baseUrl = settings.INNGEST_BASE_URL ?? devUrl;
  return new Inngest({
    id: appId,
    isDev,
    ...(baseUrl ? { baseUrl } : {}),
    ...(settings.INNGEST_EVENT_KEY ? { eventKey: settings.INNGEST_EVENT_KEY } : {}),
    ...(settings.INNGEST_SIGNING_KEY ? { signingKey: settings.INNGEST_SIGNING_KEY } : {}),
    ...(logger ? { logger: logger.child({ component: "inngest" }) } : {}),
  });
}

/** For `afterCommitNudger` (@rhumbatron/db): turns a committed nudge into an Inngest event. */
export function inngestNudgeSender(client: Inngest): (channel: string, payload: string | undefined) => Promise<void> {
  return async (channel, payload) => {
    // No payload means no key, so cron runs and unkeyed nudges share one concurrency slot.
    await client.send({ name: nudgeEventName(channel), data: payload ? { key: payload } : {} });
  };
}
