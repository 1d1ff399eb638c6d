import type { Db } from "@rhumbatron/db";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { toTRPCError } from "./errors.ts";
import { appRouter } from "./routers/_app.ts";
import { createContext, type Services } from "./trpc.ts";

export const TRPC_ENDPOINT = "/api/trpc";

/**
 * Serves one tRPC HTTP request (the web app's route handler's whole body, kept here so tests exercise
 * the real wire format without Next). `db` and `services` are functions so a missing DATABASE_URL or a
 * bad setting fails inside the request.
 */
export function handleTrpcRequest(
  req: Request,
  opts: { db: () => Db; services: () => Services; localUserEmail?: string },
): Promise<Response> {
  return fetchRequestHandler({
    endpoint: TRPC_ENDPOINT,
    req,
    router: appRouter,
    createContext: () => {
      try {
        const { localUserEmail } = opts;
        return createContext({ db: opts.db(), services: opts.services(), headers: req.headers, localUserEmail });
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
