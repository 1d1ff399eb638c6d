import { gzipSync } from "node:zlib";
import { archiveKey, archiveNdjson, type BlobStore } from "@rhumbatron/core";
import type { Subscription } from "@rhumbatron/runtime";

/**
 * audit-archiver: each delivery's fresh events become one gzip NDJSON object in the blob store. The
 * object is written in prepare, before the transaction that marks the events processed, so no
 * transaction waits on the blob store; its key is derived from its content, so a redelivery writes
 * the same object again.
 */
export const ARCHIVER = "audit-archiver";

export function archiverSubscription(blobs: BlobStore): Subscription {
  return {
    name: ARCHIVER,
    group: (events) => (events.length ? [events] : []),
    async prepare(_db, events) {
      const first = events[0];
      if (!first) return;
      const ndjson = archiveNdjson(events.map((e) => e.entry.envelope));
      const key = archiveKey(first.entry.streamIndex, first.entry.publishedAt, ndjson);
      await blobs.put(key, gzipSync(ndjson), {
        contentType: "application/x-ndjson",
        contentEncoding: "gzip",
        events: String(events.length),
        fromOffset: first.offset.toString(),
        toOffset: (events.at(-1)?.offset ?? first.offset).toString(),
      });
    },
    // The events' claim in processed_events is the whole of the transaction's work.
    apply: async () => {},
  };
}
