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
 * What the registry needs, as slices of the worker's one context (context.ts): every process gives
 * the configuration, the nudger and the blobs (the web app, for its share with split hosting); a
 * worker host also gives its git store, Sandbox and Agents (WorkerHostSlice), and then provisions
 * and cleans up repositories, sweeps old forks, runs Agents, verifications and releases. The
 * classifier is optional (abstain by default). main.ts passes runBrowserCheck as browserCheck, so
 * importing the registry never loads Playwright.
 */
export type RegistrySlice = Pick<WorkerContext, "config" | "nudger" | "blobs"> &
  Partial<Pick<WorkerContext, "classifier">>;
export type WorkerHostSlice = Pick<
  WorkerContext,
  "db" | "source" | "sandbox" | "provider" | "allowlist" | "releaseRoot" | "browserCheck"
> &
  Partial<
    Pick<WorkerContext, "templateDir" | "policy" | "projectChecks" | "reviewer" | "credentialSecret" | "agentPrograms">
  >;
export type FunctionDeps = RegistrySlice | (RegistrySlice & WorkerHostSlice);

const hostsSource = (deps: FunctionDeps): deps is RegistrySlice & WorkerHostSlice => "source" in deps;

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

/** The functions that run commands in the Sandbox: Agent runs, and verifications with their reruns. */
export const SANDBOX_FUNCTIONS: ReadonlySet<string> = new Set(["agent-runner", "verification-workflow"]);

/**
 * Placement (docs/scale-out.md): a worker whose Sandbox refuses commands (prod without bubblewrap)
 * claims no work that runs them; workers that have a Sandbox take it all. Its other work it does.
 */
export function placeFunctions(functions: WorkerFunction[], sandboxRuns: boolean): WorkerFunction[] {
  return sandboxRuns ? functions : functions.filter((fn) => !SANDBOX_FUNCTIONS.has(fn.id));
}

export type FunctionHost = "web" | "worker";

export function functionsForHost(functions: WorkerFunction[], host: FunctionHost | "all"): WorkerFunction[] {
  if (host === "all") return functions;
  return functions.filter((fn) => WORKER_HOST_FUNCTIONS.has(fn.id) === (host === "worker"));
}

/** The registry both executors read: every background function, with triggers from config. */
export function buildFunctions(deps: FunctionDeps): WorkerFunction[] {
  const { config, nudger, blobs, classifier = abstainClassifier } = deps;
  const host = hostsSource(deps) ? deps : null;
  const sourceHandlers = (enqueue: EnqueueDeps) => {
    if (!host) return {};
    const d = { ...host, ...enqueue };
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
    ...(host
      ? [
          agentRunnerFunction(host),
          forksSweepTickFunction(config, nudger),
          verificationWorkflowFunction(host),
          releaseWorkflowFunction(host),
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
