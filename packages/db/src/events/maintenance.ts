import { archiveExpired, type BlobStore, type RhumbatronConfig } from "@rhumbatron/core";
import type { Db } from "../client.ts";

export interface RetentionResult {
  streamEntriesDeleted: number;
  processedEventsDeleted: number;
  archiveObjectsDeleted: number;
}

/**
 * Retention: streams keep config.streams.retentionSeconds (7 days); archives expire after
 * config.eventRouter.archiveRetentionDays (30 days in dev, 365 in prod).
 * Claims older than the stream's retention can never be redelivered, so they go too.
 */
export async function enforceRetention(
  db: Db,
  blobs: BlobStore,
  config: RhumbatronConfig,
  now: Date,
): Promise<RetentionResult> {
  const cutoff = new Date(now.getTime() - config.streams.retentionSeconds * 1000);
  const entries = await db.streamEntry.deleteMany({ where: { publishedAt: { lt: cutoff } } });
  const claims = await db.processedEvent.deleteMany({ where: { processedAt: { lt: cutoff } } });
  let archives = 0;
  for (const key of await blobs.list("events/")) {
    if (archiveExpired(key, now, config.eventRouter.archiveRetentionDays)) {
      await blobs.delete(key);
      archives++;
    }
  }
  return { streamEntriesDeleted: entries.count, processedEventsDeleted: claims.count, archiveObjectsDeleted: archives };
}
