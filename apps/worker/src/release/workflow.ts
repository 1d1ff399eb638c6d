import { join } from "node:path";
import { canonicalRepo, DomainError, isDomainError, parseReleaseTarget } from "@rhumbatron/core";
import {
  appendReleaseStep,
  completeRelease,
  type LoadedRelease,
  loadRelease,
  recordReleaseError,
  releaseErrorOf,
  releaseEvent,
  WORKFLOWS,
  withRepoToken,
  workflowChannel,
} from "@rhumbatron/db";
import {
  type ClaimedWorkflow,
  claimWorkflowInstance,
  doneWorking,
  finishWorkflowInstance,
  releaseWorkflowLease,
  workflowRun,
} from "@rhumbatron/runtime";
import type { WorkerFunction } from "../functions/types.ts";
import type { SourceHandlerDeps } from "../source/handlers.ts";
import { syncCanonical } from "../source/sync.ts";
import { exportToFolder, postToWebhook, type ReleasedFile } from "./deliver.ts";

/**
 * ReleaseWorkflow: one instance per promoted generation with a release target (instance ID =
 * release ID `rel_<project>_<generation>`). Steps: load, release.started, source sync, delivery to
 * the target, then the final status with release.completed in one transaction. Every step is
 * stored (workflow_steps) and listed with its times in releases.steps, so a re-run replays what
 * is done. A failed step is retried after a delay; after the last retry the release fails.
 */
export interface ReleaseWorkflowDeps extends Omit<SourceHandlerDeps, "now" | "templateDir"> {
  /** Base folder of folder targets without a path, e.g. `<dataDir>/releases`. */
  releaseRoot: string;
  fetch?: typeof fetch;
  webhookTimeoutMs?: number;
  /** Retries after the first attempt; default: the release queue's policy. */
  retries?: number;
  retryDelaySeconds?: number;
}

/** Not in config yet; a webhook that has not answered by then counts as failed (and is retried). */

export type ReleaseRunOutcome =
  | { releaseId: string; outcome: "succeeded" | "failed"; error: string | null }
  | { releaseId: string; outcome: "retrying"; error: string; retryAt: string };

const PERMANENT = new Set(["INVALID_INPUT", "NOT_FOUND", "PRECONDITION_FAILED"]);
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function deliver(deps: ReleaseWorkflowDeps & { now: () => Date }, rel: LoadedRelease) {
  const target = parseReleaseTarget(rel.target);
  if (target.kind === "none") return { kind: "none" as const };
  const repo = canonicalRepo(rel.projectId);
  return withRepoToken(
    deps.db,
    { repo, mode: "read", purpose: `release ${rel.id}` },
    deps.config,
    deps.now,
    async (token) => {
      const files: ReleasedFile[] = (await deps.source.files(repo, token, rel.commit)).map((f) => ({
        path: f.path,
        blob: f.oid,
        size: f.size,
        executable: f.executable,
      }));
      if (target.kind === "folder") {
        const dest = target.path ?? join(deps.releaseRoot, rel.projectId, String(rel.generation));
        const r = await exportToFolder(dest, files, (f) => deps.source.readBlob(repo, token, f.blob));
        return { kind: "folder" as const, ...r };
      }
      const body = {
        releaseId: rel.id,
        projectId: rel.projectId,
        generation: rel.generation,
        commit: rel.commit,
        tree: rel.tree,
        files,
      };
      const timeoutMs = deps.webhookTimeoutMs ?? deps.config.release.webhookTimeoutSeconds * 1000;
      const r = await postToWebhook(target.url, body, { timeoutMs, ...(deps.fetch ? { fetch: deps.fetch } : {}) });
      return { kind: "webhook" as const, ...r };
    },
  );
}

export async function runReleaseWorkflow(
  deps: ReleaseWorkflowDeps & { now: () => Date },
  claim: ClaimedWorkflow,
): Promise<ReleaseRunOutcome> {
  const id = claim.instanceId;
  const { db, now } = deps;
  const r: ReleaseRun = { deps, id, run: workflowRun(db, id, { now, leaseSeconds: deps.config.queues.leaseSeconds }) };
  const rel = await recordedStep(
    r,
    "load",
    () => loadRelease(db, id),
    (x) => (x ? { generation: x.generation, commit: x.commit, target: (x.target as { kind?: string }).kind } : null),
  );
  if (!rel) {
    await finishWorkflowInstance(db, id, { status: "failed", error: `release ${id} not found` }, now());
    return { releaseId: id, outcome: "failed", error: `release ${id} not found` };
  }
  const retries = deps.retries ?? deps.config.queues.policies.release.maxRetries;
  let result: ReleaseResult;
  try {
    result = await attemptSteps(r, rel, claim, retries);
  } catch (err) {
    const retry = await failedAttemptStep(r, claim, err, retries);
    if (retry) return retry;
    result = { status: "failed", output: null, error: message(err) };
  }
  const final = await completeStep(r, rel, result);
  await finishWorkflowInstance(db, id, { status: final.status, output: final.output ?? {}, error: final.error }, now());
  return { releaseId: id, outcome: final.status, error: final.error };
}

interface ReleaseRun {
  deps: ReleaseWorkflowDeps & { now: () => Date };
  id: string;
  run: ReturnType<typeof workflowRun>;
}
type ReleaseResult = { status: "succeeded" | "failed"; output: unknown; error: string | null };

/** A stored step that is also listed, with its times, in releases.steps. */
async function recordedStep<T>(
  r: ReleaseRun,
  name: string,
  fn: () => Promise<T>,
  detail: (out: T) => unknown = (o) => o,
) {
  const { db, now } = r.deps;
  const startedAt = now().toISOString();
  const out = await r.run.step(name, fn);
  const finishedAt = now().toISOString();
  await appendReleaseStep(
    db,
    r.id,
    { step: name, status: "succeeded", startedAt, finishedAt, detail: detail(out) },
    now(),
  );
  return out;
}

/** Steps `started` (release.started), `sync` (canonical main up to the generation) and `deliver`. */
async function attemptSteps(r: ReleaseRun, rel: LoadedRelease, claim: ClaimedWorkflow, retries: number) {
  const { deps, id } = r;
  const { db, now } = deps;
  // An instance that kept crashing outside its steps (its lease lapsing each time) stops here.
  if (claim.attempts > retries + 1) {
    const last = await releaseErrorOf(db, id);
    throw new DomainError(
      "PRECONDITION_FAILED",
      `stopped after ${claim.attempts - 1} attempts${last ? `; last error: ${last}` : ""}`,
    );
  }
  await r.run.txStep("started", async (ctx) => {
    await releaseEvent(ctx, rel, "release.started", { releaseId: id, generation: rel.generation }, deps, now());
    const at = now().toISOString();
    await appendReleaseStep(ctx.tx, id, { step: "started", status: "succeeded", startedAt: at, finishedAt: at }, now());
    return true;
  });
  const sync = await recordedStep(r, "sync", () => syncCanonical({ ...deps, now }, rel.projectId, rel.generation));
  const delivered = await recordedStep(r, "deliver", () => deliver(deps, rel));
  return { status: "succeeded", output: { sync: sync.outcome, delivered }, error: null } satisfies ReleaseResult;
}

/**
 * A failed attempt is listed; unless the error is permanent or the retries are used up, the
 * release waits (its lease moved to the retry time) and this returns the retrying outcome.
 */
async function failedAttemptStep(
  r: ReleaseRun,
  claim: ClaimedWorkflow,
  err: unknown,
  retries: number,
): Promise<ReleaseRunOutcome | null> {
  const { db, now } = r.deps;
  const error = message(err);
  const at = now();
  const entry = { step: "attempt", status: "failed" as const, attempt: claim.attempts, error };
  await appendReleaseStep(db, r.id, { ...entry, startedAt: at.toISOString(), finishedAt: at.toISOString() }, at);
  const permanent = isDomainError(err) && PERMANENT.has(err.code);
  if (permanent || claim.attempts > retries) return null;
  const delay = r.deps.retryDelaySeconds ?? r.deps.config.queues.policies.release.retryDelaySeconds;
  const retryAt = new Date(at.getTime() + delay * 1000);
  await recordReleaseError(db, r.id, error);
  await releaseWorkflowLease(db, r.id, retryAt);
  return { releaseId: r.id, outcome: "retrying", error, retryAt: retryAt.toISOString() };
}

/** Step `complete`: the final status with release.completed, listed, in one transaction. */
function completeStep(r: ReleaseRun, rel: LoadedRelease, result: ReleaseResult): Promise<ReleaseResult> {
  const { deps, id } = r;
  return r.run.txStep("complete", async (ctx) => {
    await completeRelease(ctx, rel, result, deps, deps.now());
    const at = deps.now().toISOString();
    const detail = { outcome: result.status };
    await appendReleaseStep(
      ctx.tx,
      id,
      { step: "complete", status: "succeeded", startedAt: at, finishedAt: at, detail },
      deps.now(),
    );
    return result;
  });
}

/** Runs the release instances that are due, one after another (these hosts have two cores). */
export function releaseWorkflowFunction(deps: ReleaseWorkflowDeps): WorkerFunction {
  return {
    id: "release-workflow",
    triggers: { cron: deps.config.queues.pollCron, nudge: workflowChannel("release") },
    retries: 0,
    async handler({ now, logger, worker }) {
      const releases: ReleaseRunOutcome[] = [];
      for (let i = 0; i < 10; i++) {
        const claim = await claimWorkflowInstance(deps.db, WORKFLOWS.release, {
          now: now(),
          leaseSeconds: deps.config.queues.leaseSeconds,
          owner: worker.workerId,
          takeoverSeconds: deps.config.worker.takeoverSeconds,
        });
        if (!claim) break;
        try {
          const r = await runReleaseWorkflow({ ...deps, now }, claim);
          logger.info({ ...r, attempt: claim.attempts }, "release workflow ran");
          releases.push(r);
        } catch (err) {
          // Still leased to this worker, which no longer works on it: the next tick takes it again
          // (leases/working.ts) and replays it from its last step.
          logger.error({ releaseId: claim.instanceId, attempt: claim.attempts, err }, "release workflow crashed");
        } finally {
          doneWorking(worker.workerId, "workflow", [claim.instanceId], now());
        }
      }
      return { releases };
    },
  };
}
