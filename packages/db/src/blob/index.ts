import { join } from "node:path";
import { type BlobStore, DomainError, type Settings } from "@rhumbatron/core";
import { localFolderBlobStore } from "./local-folder.ts";
import { s3BlobStore } from "./s3.ts";

export { localFolderBlobStore } from "./local-folder.ts";
export { type S3BlobStoreOptions, s3BlobStore } from "./s3.ts";

/**
 * The blob store the settings choose, for every process that reads or writes blobs (worker, web,
 * the web's Inngest functions): `<RHUMBATRON_DATA_DIR>/blobs` by default, or the S3-compatible
 * bucket when RHUMBATRON_BLOB_STORE=s3 (parseSettings has already required its variables).
 */
export function blobStoreFromSettings(settings: Settings): BlobStore {
  if (settings.RHUMBATRON_BLOB_STORE !== "s3")
    return localFolderBlobStore(settings.RHUMBATRON_BLOB_DIR ?? join(settings.RHUMBATRON_DATA_DIR, "blobs"));
  const required = (name: keyof Settings): string => {
    const value = settings[name];
    if (typeof value !== "string" || value === "") {
      throw new DomainError("INVALID_CONFIG", `${name} is required when RHUMBATRON_BLOB_STORE=s3`);
    }
    return value;
  };
  return s3BlobStore({
    endpoint: required("RHUMBATRON_S3_ENDPOINT"),
    bucket: required("RHUMBATRON_S3_BUCKET"),
    region: settings.RHUMBATRON_S3_REGION,
    accessKeyId: required("RHUMBATRON_S3_ACCESS_KEY_ID"),
    secretAccessKey: required("RHUMBATRON_S3_SECRET_ACCESS_KEY"),
    prefix: settings.RHUMBATRON_S3_PREFIX,
  });
}
