import { join } from "node:path";
import { configFromSettings, parseSettings, scriptedProvider } from "@rhumbatron/core";
import { createDb, localFolderBlobStore } from "@rhumbatron/db";
import { buildFunctions } from "../functions/index.ts";
import { workerIdentity } from "../identity.ts";
import { createLogger } from "../logger.ts";
import { nudgerFor } from "../nudger.ts";
import { createInngestExecutor } from "./inngest.ts";

/**
 * Tests only (inngest-hosts.test.ts): one worker host as a process of its own, serving the worker
 * functions with the Inngest executor on a free port of 127.0.0.1. Its settings come from the
 * environment like the worker's (Inngest's own variables, such as INNGEST_SERVE_ORIGIN, are read
 * by the SDK). It serves the whole registry as main.ts builds it; only the heartbeat is run by the
 * tests, so the parts of the registry that need the Sandbox or the repositories are stand-ins.
 * It prints one JSON line when it listens and stops on SIGTERM.
 */
const settings = parseSettings(process.env);
if (!settings.DATABASE_URL) throw new Error("DATABASE_URL is not set");
const config = configFromSettings(settings);
const db = createDb(settings.DATABASE_URL, { maxConnections: 2 });
const worker = workerIdentity("inngest", new Date());
const notCalled = async (): Promise<never> => {
  throw new Error("not called in these tests");
};
const functions = buildFunctions({
  config,
  nudger: nudgerFor(settings),
  blobs: localFolderBlobStore(join(settings.RHUMBATRON_DATA_DIR, "blobs")),
  db,
  source: {} as never,
  sandbox: {} as never,
  provider: scriptedProvider,
  allowlist: [],
  releaseRoot: join(settings.RHUMBATRON_DATA_DIR, "releases"),
  browserCheck: notCalled,
});
const executor = createInngestExecutor({
  db,
  config,
  logger: createLogger(settings.RHUMBATRON_LOG_LEVEL),
  worker,
  now: () => new Date(),
  functions,
  settings,
  port: 0,
  host: "127.0.0.1",
});
await executor.start();
process.stdout.write(`${JSON.stringify({ listening: executor.port, workerId: worker.workerId })}\n`);

process.once("SIGTERM", () => {
  void executor
    .stop()
    .then(() => db.$disconnect())
    .then(() => process.exit(0));
});
