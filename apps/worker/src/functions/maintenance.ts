import type { BlobStore, RhumbatronConfig } from "@rhumbatron/core";
import {
  enforceRetention,
  pruneSignInAttempts,
  pruneWebhookDeliveries,
  resumeBudgetBlockedTasksEverywhere,
  sweepSandboxReservations,
} from "@rhumbatron/db";
import { expireQueueMessages, type Nudger, requeueDeferred } from "@rhumbatron/runtime";
import type { WorkerFunction } from "./types.ts";

/**
 * The daily maintenance tick (04:17 UTC by default): stream retention, claim pruning and archive
 * expiry, expired queue messages, the bounded work that ran out of deliveries, Sandbox
 * reservations left open by a crash, and the Tasks the Sandbox budget blocked once the meter has
 * room again (a new month, or a budget raised outside setSandboxBudget, such as the deployment's),
 * finished webhook deliveries older than config.webhooks.deliveryRetentionDays, and sign-in attempts
 * older than a day (every limit's window is shorter).
 */
/** Longer than any sign-in limit's window (15 minutes), so pruning never lifts a lock early. */
const SIGN_IN_ATTEMPT_KEEP_MS = 24 * 3600 * 1000;

export function maintenanceFunction(config: RhumbatronConfig, blobs: BlobStore, nudger: Nudger): WorkerFunction {
  return {
    id: "maintenance",
    triggers: { cron: config.integration.maintenanceCron },
    retries: 3,
    async handler({ db, now, logger }) {
      const retention = await enforceRetention(db, blobs, config, now());
      const expiredMessages = await expireQueueMessages(db, now());
      // Bounded work that ran out of deliveries (config.integration.maxDeliveriesPerCommand) goes
      // back on its queue.
      const requeued = await requeueDeferred(db, { config, nudger, now });
      // Sandbox reservations a crashed run or verification left open.
      const reservationsSettled = await sweepSandboxReservations(db, config);
      // Tasks the Sandbox budget blocked, wherever this month's meter has room for them again.
      const budgetResume = await resumeBudgetBlockedTasksEverywhere(db, { config, nudger, now });
      for (const f of budgetResume.failed) {
        logger.warn({ tenantId: f.tenantId, err: f.error }, "resuming budget-blocked Tasks failed");
      }
      // Finished webhook deliveries past their retention, with their attempts (bounded: a larger
      // backlog goes on the next ticks); pending and retrying ones stay.
      const webhookDeliveriesPruned = await pruneWebhookDeliveries(db, {
        before: new Date(now().getTime() - config.webhooks.deliveryRetentionDays * 24 * 3600 * 1000),
      });
      const signInAttemptsPruned = await pruneSignInAttempts(db, new Date(now().getTime() - SIGN_IN_ATTEMPT_KEEP_MS));
      return {
        ...retention,
        signInAttemptsPruned,
        expiredMessages,
        requeued,
        reservationsSettled,
        webhookDeliveriesPruned,
        budgetBlockedTasks: {
          tenants: budgetResume.tenants,
          resumed: budgetResume.resumed,
          waiting: budgetResume.waiting,
          failed: budgetResume.failed.length,
        },
      };
    },
  };
}
