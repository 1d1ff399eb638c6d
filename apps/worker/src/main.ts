import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import {
  authSecret,
  configFromSettings,
  DEFAULT_COMMAND_ALLOWLIST,
  isDomainError,
  parseSettings,
  type RhumbatronConfig,
  repoNamespace,
  requiresIsolation,
  type Settings,
} from "@rhumbatron/core";
import {
  acceptPush,
  blobStoreFromSettings,
  checkPushToken,
  checkRepoToken,
  createDb,
  databaseAddress,
  unreachable,
} from "@rhumbatron/db";
import { installedAgentPrograms } from "./agents/programs/install.ts";
import { agentProviderFromSettings, conflictReviewerFromSettings } from "./agents/provider-from-settings.ts";
import { classifierFromSettings } from "./classifier/index.ts";
import type { WorkerContext } from "./context.ts";
import { createInngestExecutor, INNGEST_SPLIT_APP_IDS } from "./executors/inngest.ts";
import { createLocalExecutor } from "./executors/local.ts";
import { errorMessage } from "./executors/run.ts";
import type { Executor } from "./executors/types.ts";
import { startBeating } from "./functions/heartbeat.ts";
import { buildFunctions, functionsForHost, placeFunctions } from "./functions/index.ts";
import type { WorkerFunction } from "./functions/types.ts";
import { workerIdentity } from "./identity.ts";
import { createLogger } from "./logger.ts";
import { nudgerFor } from "./nudger.ts";
import { DatabaseOutage } from "./outage.ts";
import { createSandbox, sandboxLimits } from "./sandbox/index.ts";
import { startGitHttpServer } from "./source/git-http.ts";
import { RemoteSourceStore } from "./source/remote-store.ts";
import { sourceRpcRoute, sourceServiceKey } from "./source/service-rpc.ts";
import { SourceStore } from "./source/store.ts";
import { runBrowserCheck } from "./verification/browser-check.ts";
import { playwrightMounts } from "./verification/playwright-check.ts";
import { closeWarmBrowser } from "./verification/warm-browser.ts";

/** Startup problems an operator must fix: one line on stderr, no stack trace, exit 1. */
function fail(message: string): never {
  process.stderr.write(`rhumbatron worker: ${message}\n`);
  process.exit(1);
}

function settingsOrFail(): Settings & { DATABASE_URL: string } {
  let settings: Settings;
  try {
    settings = parseSettings(process.env);
  } catch (err) {
    fail(`invalid settings: ${errorMessage(err)}`);
  }
  const url = settings.DATABASE_URL;
  if (!url)
    fail(
      "DATABASE_URL is not set; set it to postgresql://user:password@host:5432/database (npm start sets it for you)",
    );
  return { ...settings, DATABASE_URL: url };
}

async function main(): Promise<void> {
  const settings = settingsOrFail();
  const config = configOrFail(settings);
  const { ctx, gitRoot, localStore } = await workerContext(settings, config);
  const functions = buildFunctions(ctx);
  if (settings.RHUMBATRON_FUNCTION_HOST === "split" && settings.RHUMBATRON_EXECUTOR !== "inngest") {
    fail("RHUMBATRON_FUNCTION_HOST=split needs RHUMBATRON_EXECUTOR=inngest (the web app serves its share to Inngest)");
  }
  const sandboxRuns = ctx.sandbox.isolates || !requiresIsolation(settings);
  const hosted = placeFunctions(
    functionsForHost(functions, settings.RHUMBATRON_FUNCTION_HOST === "split" ? "worker" : "all"),
    sandboxRuns,
  );
  if (!sandboxRuns) ctx.logger.warn("this worker's Sandbox refuses commands: it runs no Agent and no check; others do");
  // The worker that holds the repositories is the source service for the others (docs/scale-out.md).
  const gitHttp = localStore ? await serveGit(settings, ctx, gitRoot, localStore) : NO_GIT_SERVER;
  const executor = executorFor(settings, { ...ctx, functions: hosted });

  // Beat before claiming anything: this host's dead earlier worker processes are marked stopped,
  // so what they held (leases, Agent runs, workflow instances) is picked up at once.
  const beating = await startBeating(ctx).catch((err: unknown) =>
    fail(`cannot record the worker's heartbeat: ${errorMessage(err)}`),
  );

  // Signals are handled from before start, so a SIGTERM during startup still stops cleanly.
  const starting = executor.start();
  const stop = stopOnSignals({ ctx, executor, starting, beating, gitHttp });
  const { logger, db, worker } = ctx;
  try {
    await starting;
  } catch (err) {
    if (stop.stopping()) return;
    await db.$disconnect().catch(() => {});
    fail(`cannot start the ${executor.kind} executor: ${errorMessage(err)}`);
  }
  if (!stop.stopping()) {
    logger.info(
      { executor: executor.kind, workerId: worker.workerId, version: worker.version, gitPort: gitHttp.port },
      "worker started",
    );
  }
}

function configOrFail(settings: Settings): RhumbatronConfig {
  try {
    // With the deployment's Sandbox budget (RHUMBATRON_SANDBOX_MONTHLY_SECONDS), as the web app has it.
    return configFromSettings(settings);
  } catch (err) {
    fail(`invalid configuration: ${errorMessage(err)}`);
  }
}

/** The worker's one context (context.ts), built once: every part takes its slice of it. */
async function workerContext(
  settings: Settings & { DATABASE_URL: string },
  config: RhumbatronConfig,
): Promise<{ ctx: WorkerContext; gitRoot: string; localStore: SourceStore | null }> {
  const logger = createLogger(settings.RHUMBATRON_LOG_LEVEL);
  const db = createDb(settings.DATABASE_URL);
  // Every loop below reports its failures here: a database outage is one line, and one when it is back.
  const outage = new DatabaseOutage({ logger, databaseAt: databaseAddress(settings.DATABASE_URL) });
  const nudger = nudgerFor(settings);
  const blobs = blobStoreFromSettings(settings);
  // Source, Sandbox and Agents.
  const gitRoot = join(settings.RHUMBATRON_DATA_DIR, "git", repoNamespace(config.env));
  // The repositories are on this disk, or (RHUMBATRON_SOURCE_URL) behind another worker's source service.
  if (settings.RHUMBATRON_SOURCE_URL && !ownSourceKey(settings))
    fail("RHUMBATRON_SOURCE_URL needs RHUMBATRON_AUTH_SECRET in prod, the same on every worker and the source service");
  const localStore = settings.RHUMBATRON_SOURCE_URL
    ? null
    : new SourceStore({
        db,
        config,
        now: () => new Date(),
        root: gitRoot,
        privateRoots: [settings.RHUMBATRON_DATA_DIR],
      });
  const store =
    localStore ??
    new RemoteSourceStore({
      url: settings.RHUMBATRON_SOURCE_URL ?? "",
      key: sourceServiceKey(authSecret(settings)),
      now: () => new Date(),
    });
  // The coding-agent programs installed on this host (npm run setup -- --agent-programs): mounted
  // read-only in the Sandbox for program Agents, and reported in the heartbeat (health, operations).
  const agentPrograms = await installedAgentPrograms();
  const sandbox = await createSandbox({
    root: join(settings.RHUMBATRON_DATA_DIR, "sandboxes"),
    toolchainPaths: [...toolchainForSandbox(), ...[...agentPrograms.values()].map((p) => p.toolchainPath)],
    allowlist: DEFAULT_COMMAND_ALLOWLIST,
    limits: sandboxLimits(config),
    log: logger,
    requireIsolation: requiresIsolation(settings),
  });
  logger.info({ sandbox: sandbox.kind, isolates: sandbox.isolates, note: sandbox.status.note }, "sandbox ready");
  // The heartbeat carries the Sandbox's status, so the health endpoint and every page can show it.
  const worker = workerIdentity(
    settings.RHUMBATRON_EXECUTOR,
    new Date(),
    sandbox.status,
    [...agentPrograms.values()].map((p) => ({ name: p.name, package: p.package, version: p.version })),
  );
  const ctx: WorkerContext = {
    db,
    config,
    nudger,
    now: () => new Date(),
    blobs,
    source: store,
    sandbox,
    provider: agentProviderFromSettings(settings),
    allowlist: [...DEFAULT_COMMAND_ALLOWLIST],
    classifier: classifierFromSettings(settings),
    reviewer: conflictReviewerFromSettings(settings),
    credentialSecret: authSecret(settings),
    browserCheck: runBrowserCheck,
    releaseRoot: join(settings.RHUMBATRON_DATA_DIR, "releases"),
    logger,
    agentPrograms,
    outage,
    worker,
  };
  return { ctx, gitRoot, localStore };
}

/** The git HTTP endpoint: clones with a read token, and pushes into projects waiting for one. */
/** Whether the source service's key may be derived here: a secret of the installation's own, or not prod. */
const ownSourceKey = (settings: Settings) =>
  settings.RHUMBATRON_ENV !== "prod" || settings.RHUMBATRON_AUTH_SECRET !== undefined;

/** A worker whose repositories are behind another's source service serves no git of its own. */
const NO_GIT_SERVER = { port: null, close: async () => {} };

function serveGit(settings: Settings, ctx: WorkerContext, gitRoot: string, store: SourceStore) {
  const { db, config, nudger, logger } = ctx;
  return startGitHttpServer({
    port: settings.RHUMBATRON_GIT_PORT,
    host: settings.HOST,
    repoRoot: gitRoot,
    authorize: (repo, token) => checkRepoToken(db, token, repo, "read", new Date()),
    // Pushes to forks (never to a canonical repository) with a write token for that fork.
    authorizeWrite: (repo, token) => checkRepoToken(db, token, repo, "write", new Date()),
    // The other workers' calls on the repositories (source/service-rpc.ts).
    // Not with the public development secret in prod: its key would be anyone's.
    routes: ownSourceKey(settings)
      ? [sourceRpcRoute({ store, key: sourceServiceKey(authSecret(settings)), logger })]
      : [],
    logger,
    // Pushes into empty projects (docs/repositories.md, Pushing into an empty project), received
    // outside gitRoot.
    push: {
      quarantineRoot: join(settings.RHUMBATRON_DATA_DIR, "git", `push-quarantine-${config.env}`),
      authorize: (projectId, token) => checkPushToken(db, projectId, token, new Date()),
      accept: (projectId, token, quarantine) =>
        acceptPush(db, { projectId, token, quarantine }, { config, nudger, now: () => new Date() }),
    },
  }).catch((err: unknown) =>
    fail(
      `cannot serve git on port ${settings.RHUMBATRON_GIT_PORT} (${errorMessage(err)}); set RHUMBATRON_GIT_PORT to a free port`,
    ),
  );
}

function executorFor(
  settings: Settings & { DATABASE_URL: string },
  deps: WorkerContext & { functions: WorkerFunction[] },
): Executor {
  return settings.RHUMBATRON_EXECUTOR === "local"
    ? createLocalExecutor({ ...deps, databaseUrl: settings.DATABASE_URL })
    : createInngestExecutor({
        ...deps,
        settings,
        host: settings.HOST,
        ...(settings.RHUMBATRON_FUNCTION_HOST === "split" ? { appId: INNGEST_SPLIT_APP_IDS.worker } : {}),
      });
}

/**
 * SIGINT and SIGTERM stop the worker: its executor, the warm browser, the heartbeat, the git
 * endpoint and the database, in that order; exit 0, or 1 with one line saying why not.
 */
function stopOnSignals({
  ctx,
  executor,
  starting,
  beating,
  gitHttp,
}: {
  ctx: WorkerContext;
  executor: Executor;
  starting: Promise<unknown>;
  beating: { stop(): Promise<void> };
  gitHttp: { close(): Promise<void> };
}): { stopping: () => boolean } {
  const { logger, db, config } = ctx;
  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "worker stopping");
    try {
      await starting.catch(() => {});
      await executor.stop();
      // No browser check runs any more: the warm Chromium they shared goes with the worker.
      await closeWarmBrowser();
      await beating.stop();
      await gitHttp.close();
      await db.$disconnect();
      logger.info("worker stopped");
      process.exit(0);
    } catch (err) {
      // The database gone (an outage, or npm start stopping after its Postgres gave up): one line in words.
      const down = unreachable(err);
      logger.error(
        { error: down ? down.reason : errorMessage(err) },
        down
          ? `worker did not stop cleanly: the database ${down.answered ? "refuses the connection" : "does not answer"} (${down.reason}), so it could not record the stop; other workers take over its work after ${config.worker.takeoverSeconds} s`
          : "worker did not stop cleanly",
      );
      process.exit(1);
    }
  };
  process.on("SIGINT", (s) => void shutdown(s));
  process.on("SIGTERM", (s) => void shutdown(s));

  return { stopping: () => stopping };
}

/** What Sandbox commands may use, read-only: the node binary's folder and the TypeScript compiler. */
function toolchainForSandbox(): string[] {
  // Node, TypeScript for build checks, and Playwright with Chromium for playwright checks.
  const paths = [dirname(process.execPath), ...playwrightMounts()];
  try {
    paths.push(dirname(createRequire(import.meta.url).resolve("typescript/package.json")));
  } catch {
    // no TypeScript installed: build checks will say so
  }
  return paths;
}

main().catch((err: unknown) => {
  // Anything unexpected still gets one readable line; a DomainError's message is written for operators.
  fail(isDomainError(err) ? err.message : `unexpected error: ${errorMessage(err)}`);
});
