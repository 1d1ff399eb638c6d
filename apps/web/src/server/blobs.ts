import { join } from "node:path";
import type { BlobStore } from "@rhumbatron/core";
import { localFolderBlobStore } from "@rhumbatron/db";
import { serverSettings } from "./settings.ts";

/** The blob store the worker writes to (`<RHUMBATRON_DATA_DIR>/blobs`); the web server only reads it. */
export function serverBlobStore(): BlobStore {
  return localFolderBlobStore(join(serverSettings().RHUMBATRON_DATA_DIR, "blobs"));
}
