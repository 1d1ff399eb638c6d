import { type BlobStore, DomainError } from "@rhumbatron/core";
import { beforeEach, describe, expect, it } from "vitest";

/**
 * The behaviour every BlobStore adapter must share, so the local folder (dev) and an S3-compatible
 * bucket (deployments) are interchangeable. Each adapter's test file calls this with a factory that
 * opens an empty store.
 */
export interface BlobStoreHarness {
  store: BlobStore;
  /** Every object the backing storage holds, whatever its name: for "nothing was written". */
  stored(): Promise<string[]>;
}

const bytes = (...values: number[]) => new Uint8Array(values);
const text = (s: string) => new TextEncoder().encode(s);

export function blobStoreContract(name: string, open: () => Promise<BlobStoreHarness>): void {
  describe(`${name}: the BlobStore contract`, () => {
    let h: BlobStoreHarness;
    beforeEach(async () => {
      h = await open();
    });

    it("reads back exactly the bytes and metadata it stored", async () => {
      const body = new Uint8Array(256 * 3).map((_, i) => (i * 7) % 256); // every byte value, NULs included
      const metadata = {
        contentType: "text/plain; charset=utf-8",
        "content-type": "image/png",
        size: "768",
        Under_Score: "  leading, double  spaces and a trailing one ",
        note: "café ✓ 100% done\ttab",
        empty: "",
      };
      await h.store.put("events/2024-01-02/stream-03/part-000001.ndjson.gz", body, metadata);
      const got = await h.store.get("events/2024-01-02/stream-03/part-000001.ndjson.gz");
      expect(got?.body).toBeInstanceOf(Uint8Array);
      expect(got?.body).toEqual(body);
      expect(got?.metadata).toEqual(metadata);

      // A view into a larger buffer (as Buffer slices are) stores only its own bytes.
      await h.store.put("source/p1/view", body.subarray(10, 20));
      expect((await h.store.get("source/p1/view"))?.body).toEqual(body.slice(10, 20));

      await h.store.put("source/p1/empty", new Uint8Array());
      expect(await h.store.get("source/p1/empty")).toEqual({ body: new Uint8Array(), metadata: {} });
    });

    it("keeps keys with every allowed character apart", async () => {
      const keys = ["a/x@y=z+1.bin", "a/x@y=z-1.bin", "a/X_y.bin", "a/x_y.bin", "a/1.2.3"];
      for (const [i, key] of keys.entries()) await h.store.put(key, bytes(i));
      for (const [i, key] of keys.entries()) expect((await h.store.get(key))?.body).toEqual(bytes(i));
      expect(await h.store.list("a/")).toEqual([...keys].sort());
    });

    it("replaces an object and its metadata on a second put", async () => {
      await h.store.put("evidence/p/c/build.log", text("first"), { contentType: "text/plain", attempt: "1" });
      await h.store.put("evidence/p/c/build.log", text("second, longer"), { attempt: "2" });
      expect(await h.store.get("evidence/p/c/build.log")).toEqual({
        body: text("second, longer"),
        metadata: { attempt: "2" },
      });
      expect(await h.store.list("evidence/")).toEqual(["evidence/p/c/build.log"]);
    });

    it("answers has, get and delete for missing keys without failing, twice over", async () => {
      expect(await h.store.get("source/p/missing")).toBeNull();
      expect(await h.store.has("source/p/missing")).toBe(false);
      await h.store.put("source/p/there", text("x"));
      expect(await h.store.has("source/p/there")).toBe(true);
      await h.store.delete("source/p/there");
      await h.store.delete("source/p/there");
      await h.store.delete("source/p/never-was");
      expect(await h.store.has("source/p/there")).toBe(false);
      expect(await h.store.get("source/p/there")).toBeNull();
      expect(await h.store.list("source/")).toEqual([]);
    });

    it("does not take a folder of keys for a key", async () => {
      await h.store.put("source/p/blobs/abc", text("x"));
      expect(await h.store.has("source/p/blobs")).toBe(false);
      expect(await h.store.get("source/p/blobs")).toBeNull();
    });

    it("lists every key under a prefix, nested, sorted, across many pages", async () => {
      const keys = [
        "events/2024-01-03/stream-00/part-1",
        "events/2024-01-02/stream-07/part-2",
        "events/2024-01-02/stream-00/part-9",
        "events/2024-01-02/stream-00/part-10",
        "events/2024-01-02/stream-00/deep/er/part-0",
        "events-other/2024-01-02/x",
        "eventsx/y",
        "index/p1/search.json",
        "source/p1/code.json",
      ];
      for (const key of keys) await h.store.put(key, text(key));
      const sorted = (p: string) => keys.filter((k) => k.startsWith(p)).sort();

      expect(await h.store.list("events/")).toEqual(sorted("events/"));
      expect(await h.store.list("events/")).toHaveLength(5);
      expect(await h.store.list("events/2024-01-02/stream-00/")).toEqual([
        "events/2024-01-02/stream-00/deep/er/part-0",
        "events/2024-01-02/stream-00/part-10",
        "events/2024-01-02/stream-00/part-9",
      ]);
      // A prefix is a string prefix, not only a folder.
      expect(await h.store.list("events/2024-01-0")).toEqual(sorted("events/2024-01-0"));
      expect(await h.store.list("events")).toEqual(sorted("events"));
      expect(await h.store.list("")).toEqual([...keys].sort());
      expect(await h.store.list("nothing/")).toEqual([]);
    });

    it("refuses invalid keys with INVALID_INPUT and writes nothing", async () => {
      const invalid = [
        "",
        "/abs",
        "a//b",
        "a/",
        "../x",
        "a/../b",
        "a/./b",
        ".",
        "a b",
        "a\\b",
        "ü",
        "a?b",
        "a#b",
        "a%2Fb",
      ];
      for (const key of invalid) {
        const calls = [
          () => h.store.put(key, text("x"), { k: "v" }),
          () => h.store.get(key),
          () => h.store.has(key),
          () => h.store.delete(key),
        ];
        for (const call of calls) {
          const err = await call().then(
            () => null,
            (e: unknown) => e,
          );
          expect(err, `${JSON.stringify(key)} was accepted`).toBeInstanceOf(DomainError);
          expect(err).toMatchObject({ code: "INVALID_INPUT" });
        }
      }
      expect(await h.stored()).toEqual([]);
      expect(await h.store.list("")).toEqual([]);
    });
  });
}
