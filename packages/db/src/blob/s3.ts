import { STATUS_CODES } from "node:http";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { type BlobObject, type BlobStore, DomainError, isValidBlobKey } from "@rhumbatron/core";
import { decodeMetadata, encodeMetadata } from "./s3-metadata.ts";

export interface S3BlobStoreOptions {
  /** e.g. `https://<account>.r2.cloudflarestorage.com`, `https://s3.eu-west-1.amazonaws.com`, `http://minio:9000`. */
  endpoint: string;
  bucket: string;
  /** `auto` for R2; the bucket's region for S3. */
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A folder inside the bucket that holds every key (`rhumbatron/prod`); unset: the bucket's root. */
  prefix?: string;
  /** Per attempt: to connect, to get the answer's headers, and the longest silence while reading its body. */
  timeoutMs?: number;
  /** Keys per ListObjectsV2 page, 1 to 1000; unset: the service's own (1000 on S3). Tests use small pages. */
  listPageSize?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** One try and two retries; the SDK retries 5xx, 429/SlowDown, timeouts and dropped connections. */
const MAX_ATTEMPTS = 3;

/**
 * The blob store on an S3-compatible bucket (R2, S3, MinIO), for deployments where the web app and
 * the worker run on different hosts. The AWS SDK's S3 client with path-style URLs
 * (`<endpoint>/<bucket>/<prefix><key>`), every request signed with SigV4. Same behaviour as the
 * local folder: a missing key reads as null, deleting one is fine, `list` returns sorted keys.
 * Anything else the bucket answers, and a bucket that cannot be reached, is UNAVAILABLE.
 */
export function s3BlobStore(o: S3BlobStoreOptions): BlobStore {
  const c = connect(o);
  const { client, bucket: Bucket } = c;
  return {
    async put(key, body, metadata = {}) {
      const Key = objectKey(c, key);
      const Metadata = encodeMetadata(key, metadata);
      const put = new PutObjectCommand({ Bucket, Key, Body: body, ContentType: "application/octet-stream", Metadata });
      await call(c, label(c, "PUT", key), () => client.send(put));
    },
    async get(key): Promise<BlobObject | null> {
      return await getObject(c, key);
    },
    async has(key) {
      // HEAD answers carry no body, so a missing bucket reads as "not there" here; get and list say more.
      const head = new HeadObjectCommand({ Bucket, Key: objectKey(c, key) });
      return (await callOrMissing(c, label(c, "HEAD", key), () => client.send(head))) !== null;
    },
    async delete(key) {
      // S3 answers 204 for a key that is not there; R2 and MinIO too.
      const del = new DeleteObjectCommand({ Bucket, Key: objectKey(c, key) });
      await call(c, label(c, "DELETE", key), () => client.send(del));
    },
    async list(listPrefix) {
      return await listKeys(c, listPrefix);
    },
  };
}

/** One bucket as the store reaches it: where it is, the folder inside it and the client. */
interface S3Connection {
  endpoint: string;
  bucket: string;
  prefix: string;
  client: S3Client;
  timeoutMs: number;
  listPageSize: number | undefined;
}

function connect(o: S3BlobStoreOptions): S3Connection {
  const endpoint = o.endpoint.replace(/\/+$/, "");
  const prefix = normalizePrefix(o.prefix);
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const { listPageSize } = o;
  if (listPageSize !== undefined && !(Number.isInteger(listPageSize) && listPageSize >= 1 && listPageSize <= 1000)) {
    throw new DomainError("INVALID_CONFIG", `invalid S3 list page size ${listPageSize} (1 to 1000)`);
  }
  const client = new S3Client({
    endpoint,
    region: o.region,
    forcePathStyle: true,
    credentials: { accessKeyId: o.accessKeyId, secretAccessKey: o.secretAccessKey },
    maxAttempts: MAX_ATTEMPTS,
    // Without throwOnRequestTimeout the handler only logs a warning when requestTimeout passes.
    requestHandler: {
      connectionTimeout: timeoutMs,
      requestTimeout: timeoutMs,
      socketTimeout: timeoutMs,
      throwOnRequestTimeout: true,
    },
    // The SDK's default CRC checksum headers are not understood by every S3-compatible service; the
    // SigV4 signature already covers the body's SHA-256.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  return { endpoint, bucket: o.bucket, prefix, client, timeoutMs, listPageSize };
}

function objectKey(c: S3Connection, key: string): string {
  if (!isValidBlobKey(key)) throw new DomainError("INVALID_INPUT", `invalid blob key ${key}`);
  return `${c.prefix}${key}`;
}

const label = (c: S3Connection, verb: string, key: string) => `S3 ${verb} ${c.bucket}/${c.prefix}${key}`;

/** One SDK call; anything but an answer it can use is an UNAVAILABLE DomainError. */
async function call<T>(c: S3Connection, what: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    throw failure(c, what, err);
  }
}

/** The same, for a call on one key: a 404 for the key (not for a missing bucket) is null. */
async function callOrMissing<T>(c: S3Connection, what: string, send: () => Promise<T>): Promise<T | null> {
  try {
    return await send();
  } catch (err) {
    // A 404 for the key is an answer; NoSuchBucket is a configuration problem, never "not there".
    if (statusOf(err) === 404 && s3Code(err as SdkError) !== "NoSuchBucket") return null;
    throw failure(c, what, err);
  }
}

async function getObject(c: S3Connection, key: string): Promise<BlobObject | null> {
  const what = label(c, "GET", key);
  const command = new GetObjectCommand({ Bucket: c.bucket, Key: objectKey(c, key) });
  const res = await callOrMissing(c, what, () => c.client.send(command));
  if (!res) return null;
  let body: Uint8Array;
  try {
    // A fresh copy: the SDK's array may be a view into a pooled buffer.
    body = new Uint8Array((await res.Body?.transformToByteArray()) ?? []);
  } catch (err) {
    throw unavailable(`${what}: reading the answer from ${c.endpoint} failed (${causeOf(err)})`);
  }
  return { body, metadata: decodeMetadata(res.Metadata) };
}

async function listKeys(c: S3Connection, listPrefix: string): Promise<string[]> {
  const { endpoint, prefix } = c;
  const what = label(c, "LIST", listPrefix);
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const command = new ListObjectsV2Command({
      Bucket: c.bucket,
      Prefix: `${prefix}${listPrefix}`,
      ContinuationToken: token,
      MaxKeys: c.listPageSize,
    });
    const page = await call(c, what, () => c.client.send(command));
    const next = page.IsTruncated ? page.NextContinuationToken : undefined;
    if (page.IsTruncated && !next) throw unavailable(`${what}: ${endpoint} said the list goes on but gave no token`);
    if (next !== undefined && next === token) {
      throw unavailable(`${what}: ${endpoint} returned the same continuation token twice`);
    }
    for (const object of page.Contents ?? []) if (object.Key !== undefined) keys.push(object.Key);
    token = next;
  } while (token);
  // Only keys this store could have written (a console's `folder/` marker is not one).
  return keys
    .filter((k) => k.startsWith(prefix))
    .map((k) => k.slice(prefix.length))
    .filter(isValidBlobKey)
    .sort();
}

/** `a/b`, `/a/b/` -> `a/b/`; unset or empty -> the bucket's root. */
function normalizePrefix(prefix: string | undefined): string {
  const trimmed = (prefix ?? "").replace(/^\/+|\/+$/g, "");
  if (trimmed === "") return "";
  if (!isValidBlobKey(trimmed)) throw new DomainError("INVALID_CONFIG", `invalid S3 prefix ${prefix}`);
  return `${trimmed}/`;
}

/** What the SDK's errors carry: an S3 answer's status and code, or a transport error's code. */
interface SdkError {
  name?: string;
  message?: string;
  code?: string;
  Code?: string;
  $metadata?: { httpStatusCode?: number; attempts?: number };
}

const statusOf = (err: unknown): number | undefined => (err as SdkError | undefined)?.$metadata?.httpStatusCode;

/** The S3 error code of an answer; none for bodiless answers (HEAD), which the SDK calls Unknown. */
function s3Code(e: SdkError): string | undefined {
  const code = e.Code ?? e.name;
  return code && !["Unknown", "UnknownError", "Error", "S3ServiceException"].includes(code) ? code : undefined;
}

/** A raw SDK error as what failed and where: the bucket's answer, a timeout, or no connection. */
function failure(c: S3Connection, what: string, err: unknown): DomainError {
  if (err instanceof DomainError) return err;
  const e = (err ?? {}) as SdkError;
  const status = statusOf(err);
  const attempts = e.$metadata?.attempts;
  const tries = attempts && attempts > 1 ? ` (${attempts} attempts)` : "";
  if (status !== undefined) {
    const code = s3Code(e);
    const message = e.message && e.message !== "UnknownError" ? e.message : "";
    const detail = code ? `${code}${message ? `: ${message}` : ""}` : (STATUS_CODES[status] ?? "");
    return unavailable(`${what}: ${c.endpoint} answered ${status} ${detail}`.trimEnd() + tries, {
      status,
      s3Code: code,
      attempts,
    });
  }
  if (e.name === "TimeoutError") {
    return unavailable(`${what}: no answer from ${c.endpoint} within ${c.timeoutMs} ms${tries}`, { attempts });
  }
  return unavailable(`${what}: cannot reach the S3 endpoint ${c.endpoint} (${causeOf(err)})${tries}`, { attempts });
}

/** A transport error's own words; Node's connection errors name their code (ECONNREFUSED, ENOTFOUND, …). */
function causeOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as NodeJS.ErrnoException).code;
  return cause.message || code || cause.name;
}

function unavailable(message: string, details?: Record<string, unknown>): DomainError {
  return new DomainError("UNAVAILABLE", message, details);
}
