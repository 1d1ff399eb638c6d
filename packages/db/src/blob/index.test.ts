import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseSettings } from "@rhumbatron/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blobStoreFromSettings } from "./index.ts";
import { type FakeS3, startFakeS3 } from "./testing/fake-s3.ts";

let dataDir: string;
let fake: FakeS3;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "rh-blob-settings-"));
  fake = await startFakeS3({ accessKeyId: "AKIDTEST", secretAccessKey: "s3cret", region: "auto", buckets: ["blobs"] });
});
afterAll(async () => {
  await fake.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("blobStoreFromSettings", () => {
  it("uses <RHUMBATRON_DATA_DIR>/blobs by default", async () => {
    const store = blobStoreFromSettings(parseSettings({ RHUMBATRON_DATA_DIR: dataDir }));
    await store.put("events/x", new Uint8Array([1]));
    expect(existsSync(join(dataDir, "blobs", "events", "x"))).toBe(true);
    expect(fake.requests).toEqual([]);
  });

  it("uses the configured bucket and prefix with RHUMBATRON_BLOB_STORE=s3, nothing on disk", async () => {
    const settings = parseSettings({
      RHUMBATRON_DATA_DIR: join(dataDir, "unused"),
      RHUMBATRON_BLOB_STORE: "s3",
      RHUMBATRON_S3_ENDPOINT: `${fake.endpoint}/`,
      RHUMBATRON_S3_BUCKET: "blobs",
      RHUMBATRON_S3_ACCESS_KEY_ID: "AKIDTEST",
      RHUMBATRON_S3_SECRET_ACCESS_KEY: "s3cret",
      RHUMBATRON_S3_PREFIX: "prod",
    });
    await blobStoreFromSettings(settings).put("events/x", new Uint8Array([2]), { contentType: "application/json" });
    expect(fake.keys("blobs")).toEqual(["prod/events/x"]);
    // Another process with the same settings (the web app) reads what the worker wrote.
    expect(await blobStoreFromSettings(settings).get("events/x")).toEqual({
      body: new Uint8Array([2]),
      metadata: { contentType: "application/json" },
    });
    expect(existsSync(join(dataDir, "unused"))).toBe(false);
  });
});
