import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { DomainError } from "@rhumbatron/core";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { blobStoreContract } from "./blob-store.contract.ts";
import { type S3BlobStoreOptions, s3BlobStore } from "./s3.ts";
import { type FakeS3, startFakeS3 } from "./testing/fake-s3.ts";

const credentials = {
  accessKeyId: "AKIDRHUMBATRONTEST",
  secretAccessKey: "rhumbatron/test+secret/KEY",
  region: "auto",
};
const BUCKET = "rhumbatron-blobs";

const fakes: FakeS3[] = [];
async function fakeS3(maxKeysPerPage = 2): Promise<FakeS3> {
  const fake = await startFakeS3({ ...credentials, buckets: [BUCKET], maxKeysPerPage });
  fakes.push(fake);
  return fake;
}
afterAll(async () => {
  for (const fake of fakes) await fake.close();
});

const storeOn = (fake: FakeS3, over: Partial<S3BlobStoreOptions> = {}) =>
  s3BlobStore({ endpoint: fake.endpoint, bucket: BUCKET, ...credentials, ...over });

async function rejection(p: Promise<unknown>): Promise<DomainError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

// Pages of at most 2 keys, and a store prefix, so every list follows continuation tokens.
blobStoreContract("s3BlobStore", async () => {
  const fake = await fakeS3(2);
  return { store: storeOn(fake, { prefix: "/rhumbatron/test/" }), stored: async () => fake.keys(BUCKET) };
});

describe("s3BlobStore on the wire", () => {
  it("writes path-style under its prefix, metadata as x-amz-meta-* headers", async () => {
    const fake = await fakeS3();
    const store = storeOn(fake, { prefix: "rh/prod" });
    await store.put("events/a@b+c.ndjson", new Uint8Array([1]), { contentType: "text/plain; charset=utf-8" });
    expect(fake.requests).toEqual(["PUT /rhumbatron-blobs/rh/prod/events/a%40b%2Bc.ndjson"]);
    expect(fake.keys(BUCKET)).toEqual(["rh/prod/events/a@b+c.ndjson"]);
    expect(fake.metaHeaders(BUCKET, "rh/prod/events/a@b+c.ndjson")).toEqual({
      "x-amz-meta-content_54ype": "text/plain; charset=utf-8",
    });
    // Another prefix on the same bucket sees none of it.
    expect(await storeOn(fake, { prefix: "rh/staging" }).list("")).toEqual([]);
    expect(await storeOn(fake).list("")).toEqual(["rh/prod/events/a@b+c.ndjson"]);
  });

  it("follows continuation tokens until the listing is complete", async () => {
    const fake = await fakeS3(2);
    const store = storeOn(fake);
    const keys = ["k/5", "k/3", "k/1", "k/4", "k/2"];
    for (const key of keys) await store.put(key, new Uint8Array());
    fake.requests.length = 0;
    expect(await store.list("k/")).toEqual(["k/1", "k/2", "k/3", "k/4", "k/5"]);
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests[0]).toBe("GET /rhumbatron-blobs?list-type=2&prefix=k%2F");
    expect(fake.requests[1]).toMatch(/^GET \/rhumbatron-blobs\?list-type=2&prefix=k%2F&continuation-token=.+/);
  });

  it("is refused with the S3 error code when a credential is wrong, and writes nothing", async () => {
    const fake = await fakeS3();
    const wrongSecret = storeOn(fake, { secretAccessKey: "not-the-secret" });
    const err = await rejection(wrongSecret.put("events/x", new Uint8Array([1])));
    expect(err.code).toBe("UNAVAILABLE");
    expect(err.message).toMatch(/S3 PUT rhumbatron-blobs\/events\/x: .* answered 403 SignatureDoesNotMatch: /);
    expect(err.details).toMatchObject({ status: 403, s3Code: "SignatureDoesNotMatch" });
    expect((await rejection(wrongSecret.get("events/x"))).message).toMatch(/403 SignatureDoesNotMatch/);
    expect((await rejection(wrongSecret.list("events/"))).message).toMatch(/403 SignatureDoesNotMatch/);
    // HEAD answers have no body: the status is all there is.
    expect((await rejection(wrongSecret.has("events/x"))).message).toMatch(/answered 403 Forbidden$/);

    const wrongKeyId = storeOn(fake, { accessKeyId: "AKIDSOMEONEELSE" });
    expect((await rejection(wrongKeyId.put("events/x", new Uint8Array()))).message).toMatch(/403 InvalidAccessKeyId/);
    const wrongRegion = storeOn(fake, { region: "eu-west-1" });
    expect((await rejection(wrongRegion.get("events/x"))).message).toMatch(/400 AuthorizationHeaderMalformed/);
    expect(fake.keys(BUCKET)).toEqual([]);
  });

  it("is refused when the signed request is changed on the way", async () => {
    const fake = await fakeS3();
    const tamper = (change: (req: Request) => Request): typeof fetch =>
      ((req: Request, init?: RequestInit) => fetch(change(req), init)) as typeof fetch;
    const otherPath = storeOn(fake, {
      fetch: tamper((req) => new Request(req.url.replace("/mine", "/theirs"), req)),
    });
    expect((await rejection(otherPath.put("mine", new Uint8Array([1])))).message).toMatch(/403 SignatureDoesNotMatch/);
    const otherBody = storeOn(fake, {
      fetch: tamper((req) => new Request(req, { body: new Uint8Array([6, 6, 6]) })),
    });
    expect((await rejection(otherBody.put("mine", new Uint8Array([1])))).message).toMatch(
      /400 XAmzContentSHA256Mismatch/,
    );
    const addedHeader = storeOn(fake, {
      fetch: tamper((req) => {
        const headers = new Headers(req.headers);
        headers.set("x-amz-meta-sneaky", "1");
        return new Request(req, { headers });
      }),
    });
    expect((await rejection(addedHeader.put("mine", new Uint8Array([1])))).message).toMatch(/403 AccessDenied/);
    expect(fake.keys(BUCKET)).toEqual([]);
  });

  it("retries a slow-down and gives up after three 5xx answers", async () => {
    const fake = await fakeS3();
    const store = storeOn(fake);
    fake.failNext(2, { status: 503, code: "SlowDown", message: "Please reduce your request rate." });
    await store.put("k", new Uint8Array([1]));
    expect(fake.requests).toHaveLength(3);
    expect(await store.has("k")).toBe(true);

    fake.requests.length = 0;
    fake.failNext(3, { status: 500, code: "InternalError", message: "We encountered an internal error." });
    const err = await rejection(store.get("k"));
    expect(err.code).toBe("UNAVAILABLE");
    expect(err.message).toMatch(/500 InternalError: We encountered an internal error\.$/);
    expect(fake.requests).toHaveLength(3);
  });

  it("reports a missing bucket instead of reading it as a missing key", async () => {
    const fake = await fakeS3();
    const store = storeOn(fake, { bucket: "no-such-bucket" });
    expect((await rejection(store.get("k"))).message).toMatch(/404 NoSuchBucket: The specified bucket does not exist/);
    expect((await rejection(store.list(""))).message).toMatch(/404 NoSuchBucket/);
    expect((await rejection(store.put("k", new Uint8Array()))).message).toMatch(/404 NoSuchBucket/);
  });

  describe("when the endpoint cannot be reached", () => {
    let fake: FakeS3 | undefined;
    afterEach(() => {
      if (fake) fake.stall = false;
    });

    it("is UNAVAILABLE naming the endpoint when nothing listens there", async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
      const endpoint = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
      await new Promise((resolve) => closed.close(resolve));
      const store = s3BlobStore({ endpoint, bucket: BUCKET, ...credentials });
      for (const call of [() => store.get("k"), () => store.put("k", new Uint8Array()), () => store.list("")]) {
        const err = await rejection(call());
        expect(err.code).toBe("UNAVAILABLE");
        expect(err.message).toContain(`cannot reach the S3 endpoint ${endpoint} (`);
        expect(err.message).toMatch(/ECONNREFUSED/);
      }
    });

    it("is UNAVAILABLE when the endpoint does not answer in time", async () => {
      fake = await fakeS3();
      fake.stall = true;
      const err = await rejection(storeOn(fake, { timeoutMs: 200 }).get("k"));
      expect(err.code).toBe("UNAVAILABLE");
      expect(err.message).toBe(`S3 GET rhumbatron-blobs/k: no answer from ${fake.endpoint} within 200 ms`);
    });
  });

  it("refuses metadata that no header can carry, before sending anything", async () => {
    const fake = await fakeS3();
    for (const metadata of [{ "": "x" }, { note: "half a pair \ud800" }] as Record<string, string>[]) {
      const err = await rejection(storeOn(fake).put("k", new Uint8Array([1]), metadata));
      expect(err.code).toBe("INVALID_INPUT");
    }
    expect(fake.requests).toEqual([]);
  });

  it("refuses a prefix that is not a folder path", () => {
    expect(() => s3BlobStore({ endpoint: "http://x", bucket: BUCKET, ...credentials, prefix: "a/../b" })).toThrow(
      /invalid S3 prefix/,
    );
  });
});
