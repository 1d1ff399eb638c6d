import type { Db } from "@rhumbatron/db";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { toTRPCError } from "./errors.ts";
import { appRouter } from "./routers/_app.ts";
import { createContext } from "./trpc.ts";

export const TRPC_ENDPOINT = "/api/trpc";

/**
 * Serves one tRPC HTTP request (the route handler's whole body, kept here so tests exercise the real
 * wire format without Next). `db` is a function so a missing DATABASE_URL fails inside the request.
 */
export function handleTrpcRequest(req: Request, opts: { db: () => Db; localUserEmail?: string }): Promise<Response> {
  return fetchRequestHandler({
    endpoint: TRPC_ENDPOINT,
    req,
    router: appRouter,
    createContext: () => {
      try {
        return createContext({ ...opts, db: opts.db(), headers: req.headers });
      } catch (err) {
        throw toTRPCError(err); // e.g. UNAVAILABLE when DATABASE_URL is missing -> 503, not 500
      }
    },
    onError({ error, path }) {
      // Expected refusals (4xx) are the client's business; only unexpected failures are logged.
      if (error.code !== "INTERNAL_SERVER_ERROR" && error.code !== "SERVICE_UNAVAILABLE") return;
      console.error(
        JSON.stringify({ level: "error", msg: "trpc request failed", path, code: error.code, error: error.message }),
      );
    },
  });
}
