import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseSettings } from "@rhumbatron/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blobStoreFromSettings } from "./index.ts";
import { S3RVER_CREDENTIALS, type S3rver, startS3rver } from "./testing/s3rver.ts";

let dataDir: string;
let s3rver: S3rver;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "rh-blob-settings-"));
  s3rver = await startS3rver();
  await s3rver.createBucket("blobs");
});
afterAll(async () => {
  await s3rver?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe("blobStoreFromSettings", () => {
  it("uses <RHUMBATRON_DATA_DIR>/blobs by default", async () => {
    const store = blobStoreFromSettings(parseSettings({ RHUMBATRON_DATA_DIR: dataDir }));
    await store.put("events/x", new Uint8Array([1]));
    expect(existsSync(join(dataDir, "blobs", "events", "x"))).toBe(true);
    expect(await s3rver.keys("blobs")).toEqual([]);
  });

  it("uses the configured bucket and prefix with RHUMBATRON_BLOB_STORE=s3, nothing on disk", async () => {
    const settings = parseSettings({
      RHUMBATRON_DATA_DIR: join(dataDir, "unused"),
      RHUMBATRON_BLOB_STORE: "s3",
      RHUMBATRON_S3_ENDPOINT: `${s3rver.endpoint}/`,
      RHUMBATRON_S3_BUCKET: "blobs",
      RHUMBATRON_S3_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      RHUMBATRON_S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      RHUMBATRON_S3_PREFIX: "prod",
    });
    await blobStoreFromSettings(settings).put("events/x", new Uint8Array([2]), { contentType: "application/json" });
    expect(await s3rver.keys("blobs")).toEqual(["prod/events/x"]);
    // Another process with the same settings (the web app) reads what the worker wrote.
    expect(await blobStoreFromSettings(settings).get("events/x")).toEqual({
      body: new Uint8Array([2]),
      metadata: { contentType: "application/json" },
    });
    expect(existsSync(join(dataDir, "unused"))).toBe(false);
  });
});
