import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { DomainError } from "@rhumbatron/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blobStoreContract } from "./blob-store.contract.ts";
import { type S3BlobStoreOptions, s3BlobStore } from "./s3.ts";
import { S3RVER_CREDENTIALS, type S3rver, startS3rver } from "./testing/s3rver.ts";

let s3rver: S3rver;
beforeAll(async () => {
  s3rver = await startS3rver();
});
afterAll(async () => {
  await s3rver?.stop();
});

const storeOn = (endpoint: string, bucket: string, over: Partial<S3BlobStoreOptions> = {}) =>
  s3BlobStore({ endpoint, bucket, ...S3RVER_CREDENTIALS, ...over });

async function rejection(p: Promise<unknown>): Promise<DomainError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

/** A local HTTP server that answers every request with `answer` (or never, when it returns null). */
async function cannedServer(answer: (n: number) => { status: number; body: string } | null) {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const a = answer(requests.length);
    req.resume();
    if (a) res.writeHead(a.status, { "content-type": "application/xml" }).end(a.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { endpoint, requests, close };
}

const s3Error = (code: string, message: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;

// With a store prefix, on s3rver's own page size (1000). Small pages are tested below, on keys s3rver
// lists in S3's order: it walks its folders depth first (node_modules/s3rver/lib/stores/filesystem.js,
// listObjects), so `events/…` comes before `events-other/…` and a page that ends inside `events/`
// skips `events-other/…` for good. Real S3 compares whole keys.
blobStoreContract("s3BlobStore on s3rver", async () => {
  const bucket = await s3rver.createBucket();
  return {
    store: storeOn(s3rver.endpoint, bucket, { prefix: "/rhumbatron/test/" }),
    stored: () => s3rver.keys(bucket),
  };
});

describe("s3BlobStore on s3rver", () => {
  it("writes under its prefix, metadata as x-amz-meta-* in its header-safe encoding", async () => {
    const bucket = await s3rver.createBucket();
    const store = storeOn(s3rver.endpoint, bucket, { prefix: "rh/prod" });
    const metadata = { contentType: "text/plain; charset=utf-8", note: "café ✓" };
    await store.put("events/a@b+c.ndjson", new Uint8Array([1]), metadata);
    expect(await s3rver.keys(bucket)).toEqual(["rh/prod/events/a@b+c.ndjson"]);
    // The encoding the store wrote before it used the AWS SDK, so older objects read the same.
    expect(await s3rver.rawMetadata(bucket, "rh/prod/events/a@b+c.ndjson")).toEqual({
      content_54ype: "text/plain; charset=utf-8",
      note: "caf%C3%A9 %E2%9C%93",
    });
    expect(await store.get("events/a@b+c.ndjson")).toEqual({ body: new Uint8Array([1]), metadata });
    // Another prefix on the same bucket sees none of it; the bucket's root sees the full key.
    expect(await storeOn(s3rver.endpoint, bucket, { prefix: "rh/staging" }).list("")).toEqual([]);
    expect(await storeOn(s3rver.endpoint, bucket).list("")).toEqual(["rh/prod/events/a@b+c.ndjson"]);
  });

  it("follows continuation tokens until the listing is complete", async () => {
    const bucket = await s3rver.createBucket();
    const keys = ["k/5", "k/3/b", "k/1", "k/4", "k/3/a/z", "k/2", "k/6", "l/1", "j"];
    const store = (over: Partial<S3BlobStoreOptions> = {}) =>
      storeOn(s3rver.endpoint, bucket, { prefix: "p", ...over });
    for (const key of keys) await store().put(key, new Uint8Array());
    const expected = ["k/1", "k/2", "k/3/a/z", "k/3/b", "k/4", "k/5", "k/6"];
    for (const listPageSize of [1, 2, 4, 1000]) {
      expect(await store({ listPageSize }).list("k/")).toEqual(expected);
      expect(await store({ listPageSize }).list("")).toEqual([...keys].sort());
    }
    expect(await store().list("k/")).toEqual(expected);
    expect(() => storeOn(s3rver.endpoint, bucket, { listPageSize: 0 })).toThrow(/invalid S3 list page size/);
  });

  // s3rver refuses an unknown access key ID but does not verify signatures: a wrong secret is not tested.
  it("is refused with the S3 error code for an access key the server does not know, and writes nothing", async () => {
    const bucket = await s3rver.createBucket();
    const stranger = storeOn(s3rver.endpoint, bucket, { accessKeyId: "AKIDSOMEONEELSE" });
    const err = await rejection(stranger.put("events/x", new Uint8Array([1])));
    expect(err.code).toBe("UNAVAILABLE");
    expect(err.message).toMatch(
      new RegExp(`^S3 PUT ${bucket}/events/x: http://127\\.0\\.0\\.1:\\d+ answered 403 InvalidAccessKeyId: \\w`),
    );
    expect(err.details).toMatchObject({ status: 403, s3Code: "InvalidAccessKeyId" });
    expect((await rejection(stranger.get("events/x"))).message).toMatch(/403 InvalidAccessKeyId/);
    expect((await rejection(stranger.list("events/"))).message).toMatch(/403 InvalidAccessKeyId/);
    // HEAD answers have no body: the status is all there is.
    expect((await rejection(stranger.has("events/x"))).message).toMatch(/answered 403 Forbidden$/);
    expect(await s3rver.keys(bucket)).toEqual([]);
  });

  it("reports a missing bucket instead of reading it as a missing key", async () => {
    const store = storeOn(s3rver.endpoint, "no-such-bucket");
    expect((await rejection(store.get("k"))).message).toMatch(/404 NoSuchBucket: The specified bucket does not exist$/);
    expect((await rejection(store.list(""))).message).toMatch(/404 NoSuchBucket/);
    expect((await rejection(store.put("k", new Uint8Array()))).message).toMatch(/404 NoSuchBucket/);
  });
});

describe("s3BlobStore when the bucket fails or cannot be reached", () => {
  it("retries a slow-down, and gives up after three 5xx answers", async () => {
    let failing = 2;
    const server = await cannedServer(() =>
      failing-- > 0
        ? { status: 503, body: s3Error("SlowDown", "Please reduce your request rate.") }
        : { status: 200, body: "" },
    );
    try {
      const store = storeOn(server.endpoint, "rhumbatron-blobs");
      await store.put("k", new Uint8Array([1]));
      expect(server.requests).toHaveLength(3);
      for (const request of server.requests) expect(request).toMatch(/^PUT \/rhumbatron-blobs\/k(\?|$)/);

      failing = Number.POSITIVE_INFINITY;
      server.requests.length = 0;
      const err = await rejection(store.get("k"));
      expect(err.code).toBe("UNAVAILABLE");
      expect(err.message).toBe(
        `S3 GET rhumbatron-blobs/k: ${server.endpoint} answered 503 SlowDown: Please reduce your request rate. (3 attempts)`,
      );
      expect(server.requests).toHaveLength(3);
    } finally {
      await server.close();
    }
  });

  it("is UNAVAILABLE naming the endpoint, without waiting out a timeout, when nothing listens there", async () => {
    const closed = await cannedServer(() => null);
    await closed.close();
    const store = storeOn(closed.endpoint, "rhumbatron-blobs");
    const started = Date.now();
    for (const call of [() => store.get("k"), () => store.put("k", new Uint8Array()), () => store.list("")]) {
      const err = await rejection(call());
      expect(err.code).toBe("UNAVAILABLE");
      expect(err.message).toContain(`cannot reach the S3 endpoint ${closed.endpoint} (`);
      expect(err.message).toMatch(/ECONNREFUSED/);
    }
    // Three calls of three attempts each, far below the 30 s a single timed-out attempt would take.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it("is UNAVAILABLE when the endpoint does not answer in time", async () => {
    const silent = await cannedServer(() => null);
    try {
      const err = await rejection(storeOn(silent.endpoint, "rhumbatron-blobs", { timeoutMs: 200 }).get("k"));
      expect(err.code).toBe("UNAVAILABLE");
      expect(err.message).toBe(
        `S3 GET rhumbatron-blobs/k: no answer from ${silent.endpoint} within 200 ms (3 attempts)`,
      );
      expect(silent.requests).toHaveLength(3);
    } finally {
      await silent.close();
    }
  });

  it("refuses metadata that no header can carry, before sending anything", async () => {
    // Nothing listens there: a request sent would fail as UNAVAILABLE, not INVALID_INPUT.
    const closed = await cannedServer(() => null);
    await closed.close();
    for (const metadata of [{ "": "x" }, { note: "half a pair \ud800" }] as Record<string, string>[]) {
      const err = await rejection(storeOn(closed.endpoint, "rhumbatron-blobs").put("k", new Uint8Array([1]), metadata));
      expect(err.code).toBe("INVALID_INPUT");
    }
  });

  it("refuses a prefix that is not a folder path", () => {
    expect(() => storeOn("http://x", "rhumbatron-blobs", { prefix: "a/../b" })).toThrow(/invalid S3 prefix/);
  });
});
