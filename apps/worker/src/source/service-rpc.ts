import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { DOMAIN_ERROR_CODES, DomainError, type DomainErrorCode, isDomainError } from "@rhumbatron/core";
import type { Logger } from "../logger.ts";
import { ImportRefused } from "./import.ts";
import type { SourceStore } from "./store.ts";

/**
 * The source service's calls (docs/scale-out.md): the process that owns the repositories answers,
 * for other workers, every source-store operation that works on repositories alone (fork, promote,
 * tag, read a tree, ...). Clones and pushes of working copies go over git's own smart HTTP on the
 * same server (git-http.ts). Each call still carries the repo token the operation checks; the
 * caller is a worker of this installation, proven by a key derived from the shared auth secret.
 *
 *   POST /source/rpc/<method>   {"args": [...]}  ->  {"result": ...} | {"error": {...}}
 *
 * Bytes, Maps and Dates cross as {"$bytes": base64}, {"$map": [[k, v], ...]}, {"$date": iso}.
 */
export const SOURCE_RPC_PREFIX = "/source/rpc/";

/** The store's operations that run where the repositories are. */
export const REMOTE_METHODS = [
  "exists",
  "provision",
  "importRepository",
  "importPushed",
  "head",
  "commitInfo",
  "fork",
  "delete",
  "rewind",
  "fastForward",
  "tag",
  "diff",
  "files",
  "readBlob",
  "hasCommit",
  "treeOf",
] as const;
export type RemoteMethod = (typeof REMOTE_METHODS)[number];

/** The key a worker presents to the source service: an HMAC of the installation's auth secret. */
export function sourceServiceKey(authSecret: string): string {
  return createHmac("sha256", authSecret).update("rhumbatron source service").digest("base64url");
}

export function encodeValue(v: unknown): unknown {
  if (v instanceof Uint8Array) return { $bytes: Buffer.from(v).toString("base64") };
  if (v instanceof Date) return { $date: v.toISOString() };
  if (v instanceof Map) return { $map: [...v.entries()].map(([k, x]) => [encodeValue(k), encodeValue(x)]) };
  if (Array.isArray(v)) return v.map(encodeValue);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encodeValue(x)]));
  return v;
}

export function decodeValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(decodeValue);
  if (!v || typeof v !== "object") return v;
  const o = v as Record<string, unknown>;
  if (typeof o.$bytes === "string") return new Uint8Array(Buffer.from(o.$bytes, "base64"));
  if (typeof o.$date === "string") return new Date(o.$date);
  if (Array.isArray(o.$map)) return new Map((o.$map as unknown[][]).map(([k, x]) => [decodeValue(k), decodeValue(x)]));
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, decodeValue(x)]));
}

/** A refusal as it crosses the wire: a DomainError keeps its code and details, an import's refusal its kind. */
export interface WireError {
  kind: "DomainError" | "ImportRefused" | "Error";
  code?: DomainErrorCode;
  message: string;
  details?: unknown;
}

const STATUS: Record<DomainErrorCode, number> = {
  INVALID_INPUT: 400,
  INVALID_CONFIG: 400,
  NOT_FOUND: 404,
  FORBIDDEN: 403,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  UNAVAILABLE: 503,
};

/** The error a WireError stands for, thrown again on the calling side. */
export function errorFromWire(e: WireError): Error {
  if (e.kind === "ImportRefused") return new ImportRefused(e.message);
  if (e.kind === "DomainError" && e.code && (DOMAIN_ERROR_CODES as readonly string[]).includes(e.code)) {
    return new DomainError(e.code, e.message, decodeValue(e.details) as Record<string, unknown> | undefined);
  }
  return new Error(`the source service failed: ${e.message}`);
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store" }).end(JSON.stringify(body));
};

async function readBody(req: IncomingMessage, max: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function keyMatches(header: string | undefined, key: string): boolean {
  const given = Buffer.from(/^Bearer (.+)$/.exec(header ?? "")?.[1] ?? "");
  const want = Buffer.from(key);
  return given.length === want.length && timingSafeEqual(given, want);
}

/**
 * The route the source service mounts on its git HTTP server. A call that is not well-formed is a
 * 4xx that changes nothing; a refusal of the store keeps its code (CONFLICT is 409, ...).
 */
export function sourceRpcRoute(o: {
  store: SourceStore;
  key: string;
  logger?: Pick<Logger, "warn">;
  maxBytes?: number;
}) {
  const max = o.maxBytes ?? 256 * 1024 * 1024;
  return {
    prefix: SOURCE_RPC_PREFIX,
    async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
      if (!keyMatches(req.headers.authorization, o.key))
        return json(res, 401, wire("FORBIDDEN", "not a worker of this installation"));
      const method = (req.url ?? "").split("?")[0]?.slice(SOURCE_RPC_PREFIX.length) ?? "";
      if (req.method !== "POST") return json(res, 405, wire("INVALID_INPUT", "source calls are POST"));
      if (!(REMOTE_METHODS as readonly string[]).includes(method))
        return json(res, 404, wire("NOT_FOUND", `no source operation ${method}`));
      const text = await readBody(req, max);
      if (text === null) return json(res, 413, wire("INVALID_INPUT", `the call is over ${max} bytes`));
      let args: unknown[];
      try {
        const parsed = decodeValue(JSON.parse(text)) as { args?: unknown };
        if (!Array.isArray(parsed.args)) throw new Error("args is not a list");
        args = parsed.args;
      } catch (err) {
        return json(res, 400, wire("INVALID_INPUT", `not a source call: ${(err as Error).message}`));
      }
      try {
        const fn = o.store[method as RemoteMethod] as (...a: unknown[]) => Promise<unknown>;
        const result = await fn.apply(o.store, args);
        return json(res, 200, { result: encodeValue(result) ?? null });
      } catch (err) {
        if (isDomainError(err))
          return json(res, STATUS[err.code], {
            error: { ...wire(err.code, err.message).error, details: encodeValue(err.details) },
          });
        if (err instanceof ImportRefused)
          return json(res, 422, { error: { kind: "ImportRefused", message: err.message } });
        o.logger?.warn({ err, method }, "source call failed");
        return json(res, 500, { error: { kind: "Error", message: (err as Error).message } });
      }
    },
  };
}

const wire = (code: DomainErrorCode, message: string): { error: WireError } => ({
  error: { kind: "DomainError", code, message },
});
