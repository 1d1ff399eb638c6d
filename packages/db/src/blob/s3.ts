import { createHash } from "node:crypto";
import { type BlobObject, type BlobStore, DomainError, isValidBlobKey } from "@rhumbatron/core";
import { AwsClient } from "aws4fetch";
import {
  decodeMetaName,
  decodeMetaValue,
  encodeMetaName,
  encodeMetaValue,
  META_PREFIX,
  parseErrorBody,
  parseListPage,
} from "./s3-wire.ts";

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
  /** Tests and custom transports; default: the global fetch. */
  fetch?: typeof fetch;
  /** Per request, including reading the body. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** Extra attempts after a 5xx, a 429 or a dropped connection (S3's SlowDown and InternalError say "retry"). */
const RETRIES = 2;
const RETRY_BASE_MS = 100;

/**
 * The blob store on an S3-compatible bucket (R2, S3, MinIO), for deployments where the web app and
 * the worker run on different hosts. Path-style URLs (`<endpoint>/<bucket>/<prefix><key>`), every
 * request signed with SigV4 (aws4fetch) including the SHA-256 of its body. Same behaviour as the
 * local folder: a missing key reads as null, deleting one is fine, `list` returns sorted keys.
 * Anything else the bucket answers, and a bucket that cannot be reached, is UNAVAILABLE.
 */
export function s3BlobStore(o: S3BlobStoreOptions): BlobStore {
  const c = connect(o);
  return {
    async put(key, body, metadata = {}) {
      await putObject(c, key, body, metadata);
    },
    async get(key): Promise<BlobObject | null> {
      return await getObject(c, key);
    },
    async has(key) {
      // HEAD answers carry no body, so a missing bucket reads as "not there" here; get and list say more.
      return (await send(c, label(c, "HEAD", key), "HEAD", objectUrl(c, key), { notFound: true })) !== null;
    },
    async delete(key) {
      // S3 answers 204 for a key that is not there; R2 and MinIO too.
      await drain(await send(c, label(c, "DELETE", key), "DELETE", objectUrl(c, key)));
    },
    async list(listPrefix) {
      return await listKeys(c, listPrefix);
    },
  };
}

/** One bucket as the store reaches it: where it is, the folder inside it, the signer and the transport. */
interface S3Connection {
  endpoint: string;
  bucket: string;
  prefix: string;
  bucketUrl: string;
  client: AwsClient;
  doFetch: typeof fetch;
  timeoutMs: number;
}

function connect(o: S3BlobStoreOptions): S3Connection {
  const endpoint = o.endpoint.replace(/\/+$/, "");
  const prefix = normalizePrefix(o.prefix);
  const bucketUrl = `${endpoint}/${encodeURIComponent(o.bucket)}`;
  const client = new AwsClient({
    accessKeyId: o.accessKeyId,
    secretAccessKey: o.secretAccessKey,
    region: o.region,
    service: "s3",
  });
  const doFetch = o.fetch ?? fetch;
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return { endpoint, bucket: o.bucket, prefix, bucketUrl, client, doFetch, timeoutMs };
}

function objectUrl(c: S3Connection, key: string): string {
  if (!isValidBlobKey(key)) throw new DomainError("INVALID_INPUT", `invalid blob key ${key}`);
  return `${c.bucketUrl}/${`${c.prefix}${key}`.split("/").map(encodeURIComponent).join("/")}`;
}

const label = (c: S3Connection, verb: string, key: string) => `S3 ${verb} ${c.bucket}/${c.prefix}${key}`;

/** One signed request; `notFound` lets a 404 for a missing key (not a missing bucket) through as null. */
async function send(
  c: S3Connection,
  what: string,
  method: string,
  url: string,
  init: { headers?: Record<string, string>; body?: Uint8Array; notFound?: boolean } = {},
): Promise<Response | null> {
  const { endpoint, timeoutMs } = c;
  const headers = { ...init.headers, "x-amz-content-sha256": sha256Hex(init.body ?? new Uint8Array()) };
  for (let attempt = 0; ; attempt++) {
    // The port's bodies are plain Uint8Arrays; the DOM typing only wants to rule out shared memory.
    const body = (init.body ?? null) as Uint8Array<ArrayBuffer> | null;
    const request = await c.client.sign(url, { method, headers, body });
    let res: Response;
    try {
      res = await c.doFetch(request, { signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      if (isTimeout(err)) throw unavailable(`${what}: no answer from ${endpoint} within ${timeoutMs} ms`);
      if (attempt < RETRIES) {
        await sleep(attempt);
        continue;
      }
      throw unavailable(`${what}: cannot reach the S3 endpoint ${endpoint} (${causeOf(err)})`);
    }
    if (res.ok) return res;
    const text = await readText(res);
    const error = parseErrorBody(text);
    // A 404 for the key is an answer; NoSuchBucket is a configuration problem, never "not there".
    if (res.status === 404 && init.notFound && error?.code !== "NoSuchBucket") return null;
    if ((res.status >= 500 || res.status === 429) && attempt < RETRIES) {
      await sleep(attempt);
      continue;
    }
    const detail = error ? `${error.code}${error.message ? `: ${error.message}` : ""}` : res.statusText;
    throw unavailable(`${what}: ${endpoint} answered ${res.status} ${detail}`.trimEnd(), {
      status: res.status,
      s3Code: error?.code,
    });
  }
}

/** Reads a body under the same timeout; a connection dropped mid-body is UNAVAILABLE too. */
async function read<T>(c: S3Connection, what: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    throw unavailable(`${what}: reading the answer from ${c.endpoint} failed (${causeOf(err)})`);
  }
}

async function putObject(c: S3Connection, key: string, body: Uint8Array, metadata: Record<string, string>) {
  const url = objectUrl(c, key);
  const headers: Record<string, string> = { "content-type": "application/octet-stream" };
  for (const [name, value] of Object.entries(metadata)) {
    try {
      if (name === "") throw new Error("empty name");
      headers[`${META_PREFIX}${encodeMetaName(name)}`] = encodeMetaValue(value);
    } catch {
      throw new DomainError("INVALID_INPUT", `metadata ${JSON.stringify(name)} of blob ${key} cannot be stored`);
    }
  }
  await drain(await send(c, label(c, "PUT", key), "PUT", url, { headers, body }));
}

async function getObject(c: S3Connection, key: string): Promise<BlobObject | null> {
  const what = label(c, "GET", key);
  const res = await send(c, what, "GET", objectUrl(c, key), { notFound: true });
  if (!res) return null;
  const body = new Uint8Array(await read(c, what, () => res.arrayBuffer()));
  const metadata: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!name.startsWith(META_PREFIX)) return;
    try {
      metadata[decodeMetaName(name.slice(META_PREFIX.length))] = decodeMetaValue(value);
    } catch {
      metadata[name.slice(META_PREFIX.length)] = value; // written by another tool: keep it as it came
    }
  });
  return { body, metadata };
}

async function listKeys(c: S3Connection, listPrefix: string): Promise<string[]> {
  const { endpoint, prefix } = c;
  const what = label(c, "LIST", listPrefix);
  const keys: string[] = [];
  let token: string | null = null;
  do {
    const url = new URL(c.bucketUrl);
    url.searchParams.set("list-type", "2");
    url.searchParams.set("prefix", `${prefix}${listPrefix}`);
    if (token) url.searchParams.set("continuation-token", token);
    const res = (await send(c, what, "GET", url.toString())) as Response;
    const page = parseListPage(await read(c, what, () => res.text()));
    if (page.nextToken !== null && page.nextToken === token) {
      throw unavailable(`${what}: ${endpoint} returned the same continuation token twice`);
    }
    keys.push(...page.keys);
    token = page.nextToken;
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

const sha256Hex = (body: Uint8Array) => createHash("sha256").update(body).digest("hex");
const sleep = (attempt: number) => new Promise((r) => setTimeout(r, RETRY_BASE_MS * 2 ** attempt));
const readText = (res: Response) => res.text().catch(() => "");
/** Lets undici reuse the connection: an answer's body must be read or cancelled. */
const drain = (res: Response | null) => res?.body?.cancel().catch(() => {});
const isTimeout = (err: unknown) => err instanceof Error && err.name === "TimeoutError";

/** undici says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, …) is in its cause. */
function causeOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as NodeJS.ErrnoException).code;
  return cause.message || code || cause.name;
}

function unavailable(message: string, details?: Record<string, unknown>): DomainError {
  return new DomainError("UNAVAILABLE", message, details);
}
