import { createHash, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { escapeXml } from "../s3-wire.ts";
import { type S3Failure, type SigV4Credentials, verifySigV4 } from "./sigv4.ts";

/**
 * A local stand-in for an S3-compatible bucket service, in memory, speaking S3's wire format:
 * path-style PutObject, GetObject, HeadObject, DeleteObject and ListObjectsV2 (continuation tokens,
 * `ListBucketResult`), errors as `<Error><Code/><Message/></Error>`, and every request's SigV4
 * signature verified against the test credentials (403 SignatureDoesNotMatch otherwise).
 */
export interface FakeS3Options extends SigV4Credentials {
  buckets: string[];
  /** Largest page ListObjectsV2 returns, whatever max-keys asks (real S3: 1000). */
  maxKeysPerPage?: number;
}

interface StoredObject {
  body: Buffer;
  /** `x-amz-meta-*` headers exactly as they arrived (names lowercased, as S3 keeps them). */
  meta: Record<string, string>;
  etag: string;
  lastModified: Date;
}

export interface FakeS3 {
  /** e.g. http://127.0.0.1:41234 */
  endpoint: string;
  /** Every request as `METHOD path?query`, in order. */
  requests: string[];
  /** The raw object keys in a bucket, sorted (the store's prefix included). */
  keys(bucket: string): string[];
  /** The stored `x-amz-meta-*` headers of an object. */
  metaHeaders(bucket: string, key: string): Record<string, string> | undefined;
  /** The next `count` requests are answered with this S3 error instead (after their signature is checked). */
  failNext(count: number, failure: S3Failure): void;
  /** While true, requests are read and never answered. */
  stall: boolean;
  close(): Promise<void>;
}

export async function startFakeS3(options: FakeS3Options): Promise<FakeS3> {
  const buckets = new Map(options.buckets.map((b) => [b, new Map<string, StoredObject>()]));
  const pageSize = options.maxKeysPerPage ?? 1000;
  const requests: string[] = [];
  const failures: S3Failure[] = [];

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    requests.push(`${req.method} ${req.url}`);
    if (fake.stall) return;
    try {
      const failure = verifySigV4(req, Buffer.concat(chunks), options) ?? failures.shift();
      if (failure) return sendError(res, req, failure);
      handle(req, res, Buffer.concat(chunks));
    } catch (err) {
      sendError(res, req, { status: 400, code: "InvalidRequest", message: String(err) });
    }
  });

  function handle(req: IncomingMessage, res: ServerResponse, body: Buffer) {
    const url = new URL(req.url ?? "/", "http://fake-s3");
    const [, bucketName = "", ...rest] = url.pathname.split("/");
    const bucket = buckets.get(decodeURIComponent(bucketName));
    if (!bucket) {
      return sendError(res, req, { status: 404, code: "NoSuchBucket", message: "The specified bucket does not exist" });
    }
    const key = rest.map(decodeURIComponent).join("/");
    if (key === "") {
      if (req.method === "GET" && url.searchParams.get("list-type") === "2") {
        return listObjectsV2(res, decodeURIComponent(bucketName), bucket, url.searchParams);
      }
      return sendError(res, req, { status: 501, code: "NotImplemented", message: "Not implemented by the fake" });
    }
    const found = bucket.get(key);
    switch (req.method) {
      case "PUT": {
        const meta = Object.fromEntries(
          Object.entries(req.headers).filter(([h]) => h.startsWith("x-amz-meta-")) as [string, string][],
        );
        const etag = `"${createHash("md5").update(body).digest("hex")}"`;
        bucket.set(key, { body, meta, etag, lastModified: new Date() });
        res.writeHead(200, { etag }).end();
        return;
      }
      case "GET":
      case "HEAD": {
        if (!found) {
          if (req.method === "HEAD") return res.writeHead(404).end();
          return sendError(res, req, { status: 404, code: "NoSuchKey", message: "The specified key does not exist." });
        }
        res.writeHead(200, {
          "content-type": "application/octet-stream",
          "content-length": found.body.length,
          etag: found.etag,
          "last-modified": found.lastModified.toUTCString(),
          ...found.meta,
        });
        res.end(req.method === "GET" ? found.body : undefined);
        return;
      }
      case "DELETE":
        bucket.delete(key);
        res.writeHead(204).end();
        return;
      default:
        sendError(res, req, { status: 405, code: "MethodNotAllowed", message: "The method is not allowed" });
    }
  }

  function listObjectsV2(res: ServerResponse, name: string, bucket: Map<string, StoredObject>, q: URLSearchParams) {
    const prefix = q.get("prefix") ?? "";
    const token = q.get("continuation-token");
    const after = token === null ? null : Buffer.from(token, "base64").toString("utf8");
    const maxKeys = Math.min(Number(q.get("max-keys") ?? 1000), pageSize);
    const all = [...bucket.keys()].filter((k) => k.startsWith(prefix) && (after === null || k > after)).sort();
    const page = all.slice(0, maxKeys);
    const truncated = all.length > page.length;
    const next = truncated ? Buffer.from(page.at(-1) ?? "").toString("base64") : null;
    const contents = page.map((k) => {
      const o = bucket.get(k) as StoredObject;
      return `<Contents><Key>${escapeXml(k)}</Key><LastModified>${o.lastModified.toISOString()}</LastModified><ETag>${escapeXml(o.etag)}</ETag><Size>${o.body.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`;
    });
    const xml = [
      `<?xml version="1.0" encoding="UTF-8"?>`,
      `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`,
      `<Name>${escapeXml(name)}</Name><Prefix>${escapeXml(prefix)}</Prefix><KeyCount>${page.length}</KeyCount>`,
      `<MaxKeys>${maxKeys}</MaxKeys><IsTruncated>${truncated}</IsTruncated>`,
      token === null ? "" : `<ContinuationToken>${escapeXml(token)}</ContinuationToken>`,
      next === null ? "" : `<NextContinuationToken>${escapeXml(next)}</NextContinuationToken>`,
      ...contents,
      `</ListBucketResult>`,
    ].join("");
    res.writeHead(200, { "content-type": "application/xml" }).end(xml);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const fake: FakeS3 = {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    keys: (bucket) => [...(buckets.get(bucket)?.keys() ?? [])].sort(),
    metaHeaders: (bucket, key) => buckets.get(bucket)?.get(key)?.meta,
    failNext(count, failure) {
      for (let i = 0; i < count; i++) failures.push(failure);
    },
    stall: false,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return fake;
}

function sendError(res: ServerResponse, req: IncomingMessage, f: S3Failure) {
  const requestId = randomUUID();
  if (req.method === "HEAD") return res.writeHead(f.status, { "x-amz-request-id": requestId }).end();
  const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${escapeXml(f.code)}</Code><Message>${escapeXml(f.message)}</Message><Resource>${escapeXml(req.url ?? "")}</Resource><RequestId>${requestId}</RequestId></Error>`;
  res.writeHead(f.status, { "content-type": "application/xml", "x-amz-request-id": requestId }).end(xml);
}
