import type { BlobStore, RhumbatronConfig } from "@rhumbatron/core";
import {
  enforceRetention,
  expireQueueMessages,
  type Nudger,
  requeueDeferred,
  sweepSandboxReservations,
} from "@rhumbatron/db";
import type { WorkerFunction } from "./types.ts";

/**
 * The daily maintenance tick (04:17 UTC by default): stream retention, claim pruning and archive
 * expiry, expired queue messages, the bounded work that ran out of deliveries, and Sandbox
 * reservations left open by a crash.
 */
export function maintenanceFunction(config: RhumbatronConfig, blobs: BlobStore, nudger: Nudger): WorkerFunction {
  return {
    id: "maintenance",
    triggers: { cron: config.integration.maintenanceCron },
    retries: 3,
    async handler({ db, now }) {
      const retention = await enforceRetention(db, blobs, config, now());
      const expiredMessages = await expireQueueMessages(db, now());
      // Bounded work that ran out of deliveries goes back on its queue (spec: integration limit).
      const requeued = await requeueDeferred(db, { config, nudger, now });
      // Sandbox reservations a crashed run or verification left open.
      const reservationsSettled = await sweepSandboxReservations(db, config);
      return { ...retention, expiredMessages, requeued, reservationsSettled };
    },
  };
}
