import type { BlobStore, RhumbatronConfig } from "@rhumbatron/core";
import { enforceRetention } from "@rhumbatron/db";
import type { WorkerFunction } from "./types.ts";

/**
 * The daily maintenance tick (04:17 UTC by default): stream retention, claim pruning and archive
 * expiry. Later issues add their bounded re-queues here.
 */
export function maintenanceFunction(config: RhumbatronConfig, blobs: BlobStore): WorkerFunction {
  return {
    id: "maintenance",
    triggers: { cron: config.integration.maintenanceCron },
    retries: 3,
    async handler({ db, now }) {
      return enforceRetention(db, blobs, config, now());
    },
  };
}
