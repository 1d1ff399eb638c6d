import type { BlobStore } from "@rhumbatron/core";
import { blobStoreFromSettings } from "@rhumbatron/db";
import { serverSettings } from "./settings.ts";

/**
 * The blob store the worker writes to (`<RHUMBATRON_DATA_DIR>/blobs`, or the S3-compatible bucket
 * with RHUMBATRON_BLOB_STORE=s3); the web server only reads it.
 */
export function serverBlobStore(): BlobStore {
  return blobStoreFromSettings(serverSettings());
}
