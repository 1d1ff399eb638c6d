import { loadConfig } from "@rhumbatron/core";
import type { Db } from "@rhumbatron/db";
import { TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { toTRPCError } from "./errors.ts";
import { appRouter } from "./routers/_app.ts";
import { createContext, type Services } from "./trpc.ts";

export const TRPC_ENDPOINT = "/api/trpc";

/**
 * Serves one tRPC HTTP request (the web app's route handler's whole body, kept here so tests exercise
 * the real wire format without Next). `db` and `services` are functions so a missing DATABASE_URL or a
 * bad setting fails inside the request. A body over `config.api.requestBodyMaxBytes` is answered 413
 * (PAYLOAD_TOO_LARGE) before any procedure runs.
 */
export function handleTrpcRequest(
  req: Request,
  opts: { db: () => Db; services: () => Services; localUserEmail?: string },
): Promise<Response> {
  // Built once per request: the body limit needs the config before the context exists.
  let services: { ok: true; value: Services } | { ok: false; error: unknown };
  try {
    services = { ok: true, value: opts.services() };
  } catch (error) {
    services = { ok: false, error };
  }
  const maxBytes = services.ok ? services.value.config.api.requestBodyMaxBytes : loadConfig().api.requestBodyMaxBytes;
  return fetchRequestHandler({
    endpoint: TRPC_ENDPOINT,
    req: withBodyLimit(req, maxBytes),
    router: appRouter,
    createContext: () => {
      try {
        if (!services.ok) throw services.error;
        const foreign = foreignOrigin(req, services.value.appOrigins);
        if (foreign) {
          throw new TRPCError({
            code: "FORBIDDEN",
            message: `a signed-in browser's change must come from this app's own pages, not from ${foreign}`,
          });
        }
        const { localUserEmail } = opts;
        return createContext({ db: opts.db(), services: services.value, headers: req.headers, localUserEmail });
      } catch (err) {
        throw toTRPCError(err); // e.g. UNAVAILABLE when DATABASE_URL is missing -> 503, not 500
      }
    },
    onError({ error, path }) {
      // Expected refusals (4xx) are the client's business; only unexpected failures are logged.
      if (error.code !== "INTERNAL_SERVER_ERROR" && error.code !== "SERVICE_UNAVAILABLE") return;
      const cause = error.cause as { details?: { cause?: unknown } } | undefined;
      console.error(
        JSON.stringify({
          level: "error",
          msg: "trpc request failed",
          path,
          code: error.code,
          error: error.message,
          ...(cause?.details?.cause ? { cause: cause.details.cause } : {}),
        }),
      );
    },
  });
}

/**
 * The Origin of a cookie-authenticated POST that is not one of the app's own, or null. The session
 * cookie goes with any request a browser sends here, even one another site's page makes; browsers
 * stop most of those with CORS, and this is the second wall: a mutation from another origin is
 * refused before it runs. An API token is not sent by a browser on its own, and a request with no
 * Origin (the CLI, curl) is not a browser's cross-site request, so neither is refused here.
 */
function foreignOrigin(req: Request, own: readonly string[]): string | null {
  if (req.method !== "POST" || req.headers.has("authorization")) return null;
  const origin = req.headers.get("origin");
  if (origin === null) return null;
  return own.includes(origin) || origin === new URL(req.url).origin ? null : origin;
}

function tooLarge(maxBytes: number): TRPCError {
  const mb = Math.round((maxBytes / (1024 * 1024)) * 10) / 10;
  return new TRPCError({
    code: "PAYLOAD_TOO_LARGE",
    message: `the request body is larger than the ${mb} MB (${maxBytes} bytes) this server accepts`,
  });
}

/**
 * The request with a body that fails with PAYLOAD_TOO_LARGE once more than `maxBytes` arrived. The
 * bytes are counted as they stream in, since Content-Length may be absent or wrong; a declared
 * length over the limit fails before anything is read. tRPC reads the body inside the procedure
 * call, so the refusal comes back as its typed error (413) and no procedure runs.
 */
export function withBodyLimit(req: Request, maxBytes: number): Request {
  if (!req.body) return req;
  const declared = Number(req.headers.get("content-length"));
  const source = req.body;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let received = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (Number.isFinite(declared) && declared > maxBytes) {
        await source.cancel().catch(() => {});
        controller.error(tooLarge(maxBytes));
        return;
      }
      reader ??= source.getReader();
      const { done, value } = await reader.read();
      if (done) return controller.close();
      received += value.byteLength;
      if (received > maxBytes) {
        await reader.cancel().catch(() => {});
        controller.error(tooLarge(maxBytes));
        return;
      }
      controller.enqueue(value);
    },
    cancel(reason) {
      return (reader ?? source).cancel(reason);
    },
  });
  return new Request(req.url, {
    method: req.method,
    headers: req.headers,
    body,
    signal: req.signal,
    // Node's fetch needs this for a streamed request body.
    duplex: "half",
  } as RequestInit & { duplex: "half" });
}
