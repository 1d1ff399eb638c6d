import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { blobStoreContract } from "./blob-store.contract.ts";
import { localFolderBlobStore } from "./local-folder.ts";

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

blobStoreContract("localFolderBlobStore", async () => {
  const root = await mkdtemp(join(tmpdir(), "rh-blob-store-"));
  roots.push(root);
  const store = localFolderBlobStore(join(root, "blobs"));
  return {
    store,
    // Files of any name, temporary and metadata files included, anywhere under the temporary folder.
    stored: async () =>
      (await readdir(root, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name),
  };
});
