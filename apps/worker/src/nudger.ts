import type { Settings } from "@rhumbatron/core";
import { afterCommitNudger, type Nudger, pgNotifyNudger } from "@rhumbatron/runtime";
import type { Inngest } from "inngest";
import { createInngestClient, inngestNudgeSender } from "./executors/inngest-client.ts";

/**
 * The nudger the writing side (apps/web commands) should use for the configured executor: a
 * pg_notify for the local executor, an Inngest event after commit for the inngest executor.
 */
export function nudgerFor(
  settings: Pick<
    Settings,
    "RHUMBATRON_EXECUTOR" | "INNGEST_EVENT_KEY" | "INNGEST_SIGNING_KEY" | "INNGEST_BASE_URL" | "INNGEST_DEV"
  >,
  client?: Inngest,
): Nudger {
  if (settings.RHUMBATRON_EXECUTOR === "local") return pgNotifyNudger;
  return afterCommitNudger(inngestNudgeSender(client ?? createInngestClient(settings)));
}
