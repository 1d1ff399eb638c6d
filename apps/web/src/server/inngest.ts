import { blobStoreFromSettings } from "@rhumbatron/db";
import {
  buildFunctions,
  createInngestClient,
  createLogger,
  functionsForHost,
  INNGEST_PATH,
  INNGEST_SPLIT_APP_IDS,
  toInngestFunctions,
  workerIdentity,
} from "@rhumbatron/worker";
import { serve } from "inngest/next";
import { getDb } from "./db.ts";
import { webNudger } from "./nudger.ts";
import { serverConfig, serverSettings } from "./settings.ts";

/**
 * The web app's share of the function registry, served to Inngest at /api/inngest when
 * RHUMBATRON_FUNCTION_HOST=split: every function that needs no Sandbox and no source store
 * (publisher, event router, maintenance, heartbeat, DB-only queue consumers, crons). The worker
 * host serves the rest from the same registry. Built on the first request, from settings.
 */
type Handler = (req: Request, ctx: unknown) => Promise<Response>;
let handlers: { GET: Handler; POST: Handler; PUT: Handler } | null = null;

export function webFunctions() {
  const config = serverConfig();
  const settings = serverSettings();
  const all = buildFunctions({
    config,
    nudger: webNudger(settings),
    blobs: blobStoreFromSettings(settings),
  });
  return functionsForHost(all, "web");
}

function build() {
  const settings = serverSettings();
  const logger = createLogger(settings.RHUMBATRON_LOG_LEVEL);
  const client = createInngestClient(settings, logger, INNGEST_SPLIT_APP_IDS.web);
  const functions = toInngestFunctions(client, webFunctions(), {
    db: getDb(),
    config: serverConfig(),
    logger,
    worker: workerIdentity("inngest", new Date()),
    now: () => new Date(),
  });
  return serve({ client, functions, servePath: INNGEST_PATH }) as unknown as {
    GET: Handler;
    POST: Handler;
    PUT: Handler;
  };
}

export async function inngestRoute(method: "GET" | "POST" | "PUT", req: Request, ctx: unknown): Promise<Response> {
  if (serverSettings().RHUMBATRON_FUNCTION_HOST !== "split") {
    return Response.json(
      {
        error:
          "background functions run in the worker (RHUMBATRON_FUNCTION_HOST=worker); set RHUMBATRON_FUNCTION_HOST=split to serve the web app's share here",
      },
      { status: 404 },
    );
  }
  handlers ??= build();
  return handlers[method](req, ctx);
}
