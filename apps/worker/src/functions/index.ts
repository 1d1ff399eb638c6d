import { DomainError } from "@rhumbatron/core";
import { type EnqueueDeps, validateNudgeChannel } from "@rhumbatron/runtime";
import { abstainClassifier } from "../classifier/abstain.ts";
import type { WorkerContext } from "../context.ts";
import { indexingHandlers } from "../indexer/index.ts";
import { releaseWorkflowFunction } from "../release/workflow.ts";
import { fixtureHandler } from "../source/fixture.ts";
import { cleanupHandler, forksSweepHandler, provisionHandler } from "../source/handlers.ts";
import { landHandler } from "../verification/landing.ts";
import { agentRunnerFunction } from "./agent-runner.ts";
import { analyticsProjectorFunction } from "./analytics-projector.ts";
import { eventRouterFunction } from "./event-router.ts";
import { forksSweepTickFunction } from "./forks-sweep.ts";
import { heartbeatFunction } from "./heartbeat.ts";
import { maintenanceFunction } from "./maintenance.ts";
import { outboxPublisherFunction } from "./outbox-publisher.ts";
import { queueConsumerFunctions } from "./queue-consumers.ts";
import type { WorkerFunction } from "./types.ts";
import { verificationWorkflowFunction } from "./verification.ts";

export { type HeartbeatResult, heartbeatFunction } from "./heartbeat.ts";
export { DEFAULT_RUN_KEY, type FunctionContext, type RunTrigger, type WorkerFunction } from "./types.ts";

/** Inngest's limit; the local executor does not retry (the next cron tick or nudge does). */
const MAX_RETRIES = 20;

/**
 * What the registry needs: a slice of the worker's one context (context.ts). The classifier is
 * optional (abstain by default); `source` (git, Sandbox, Agents) too: when given, the worker
 * provisions and cleans up repositories, sweeps old forks, runs Agents, verifications and
 * releases. Tests of other parts leave it out. main.ts passes runBrowserCheck as browserCheck, so
 * importing the registry never loads Playwright.
 */
export type FunctionDeps = Pick<WorkerContext, "config" | "nudger" | "blobs"> &
  Partial<Pick<WorkerContext, "classifier">> & {
    source?: Pick<
      WorkerContext,
      | "db"
      | "sandbox"
      | "provider"
      | "allowlist"
      | "templateDir"
      | "releaseRoot"
      | "browserCheck"
      | "policy"
      | "projectChecks"
    > &
      Partial<Pick<WorkerContext, "reviewer" | "credentialSecret" | "agentPrograms">> & {
        store: WorkerContext["source"];
      };
  };

/**
 * Functions that need the Sandbox or the source store (git repositories on local disk): with
 * RHUMBATRON_FUNCTION_HOST=split they run on the worker host; every other function is served by the
 * web app at /api/inngest. One registry, so no function is defined twice.
 */
export const WORKER_HOST_FUNCTIONS: ReadonlySet<string> = new Set([
  "agent-runner",
  "forks-sweep-tick",
  "verification-workflow",
  "release-workflow",
  "queue-integration",
  "queue-indexing",
]);

export type FunctionHost = "web" | "worker";

export function functionsForHost(functions: WorkerFunction[], host: FunctionHost | "all"): WorkerFunction[] {
  if (host === "all") return functions;
  return functions.filter((fn) => WORKER_HOST_FUNCTIONS.has(fn.id) === (host === "worker"));
}

/** The registry both executors read: every background function, with triggers from config. */
export function buildFunctions({
  config,
  nudger,
  blobs,
  classifier = abstainClassifier,
  source,
}: FunctionDeps): WorkerFunction[] {
  const sourceHandlers = (deps: EnqueueDeps) => {
    if (!source) return {};
    const d = {
      ...deps,
      db: source.db,
      source: source.store,
      blobs,
      ...(source.templateDir ? { templateDir: source.templateDir } : {}),
      ...(source.credentialSecret ? { credentialSecret: source.credentialSecret } : {}),
    };
    return {
      integration: [provisionHandler(d), cleanupHandler(d), forksSweepHandler(d), landHandler(d), fixtureHandler(d)],
      indexing: indexingHandlers(d),
    };
  };
  return checkRegistry([
    heartbeatFunction(config),
    outboxPublisherFunction(config, nudger),
    eventRouterFunction({ config, blobs, nudger, classifier }),
    analyticsProjectorFunction({ config, nudger }),
    maintenanceFunction(config, blobs, nudger),
    ...queueConsumerFunctions(config, nudger, sourceHandlers),
    ...(source
      ? [
          agentRunnerFunction({
            db: source.db,
            config,
            nudger,
            source: source.store,
            sandbox: source.sandbox,
            blobs,
            provider: source.provider,
            allowlist: source.allowlist,
            ...(source.agentPrograms ? { agentPrograms: source.agentPrograms } : {}),
            ...(source.credentialSecret ? { credentialSecret: source.credentialSecret } : {}),
          }),
          forksSweepTickFunction(config, nudger),
          verificationWorkflowFunction({
            db: source.db,
            config,
            nudger,
            source: source.store,
            sandbox: source.sandbox,
            blobs,
            browserCheck: source.browserCheck,
            ...(source.policy ? { policy: source.policy } : {}),
            ...(source.projectChecks ? { projectChecks: source.projectChecks } : {}),
            ...(source.reviewer ? { reviewer: source.reviewer } : {}),
          }),
          releaseWorkflowFunction({
            db: source.db,
            config,
            nudger,
            source: source.store,
            blobs,
            releaseRoot: source.releaseRoot,
          }),
        ]
      : []),
  ]);
}

/** Fails at startup, not at the first nudge, on a duplicate id, an invalid channel or retry count. */
export function checkRegistry(functions: WorkerFunction[]): WorkerFunction[] {
  const ids = new Set<string>();
  for (const fn of functions) {
    if (ids.has(fn.id)) throw new DomainError("INVALID_CONFIG", `two worker functions have the id "${fn.id}"`);
    ids.add(fn.id);
    if (fn.triggers.nudge !== undefined) validateNudgeChannel(fn.triggers.nudge);
    if (!Number.isInteger(fn.retries) || fn.retries < 0 || fn.retries > MAX_RETRIES) {
      throw new DomainError(
        "INVALID_CONFIG",
        `worker function "${fn.id}": retries must be an integer 0..${MAX_RETRIES}`,
      );
    }
  }
  return functions;
}
