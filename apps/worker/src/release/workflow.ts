import { join } from "node:path";
import { canonicalRepo, DomainError, isDomainError, parseReleaseTarget } from "@rhumbatron/core";
import {
  appendReleaseStep,
  type ClaimedWorkflow,
  claimWorkflowInstance,
  completeRelease,
  finishWorkflowInstance,
  type LoadedRelease,
  loadRelease,
  recordReleaseError,
  releaseEvent,
  releaseWorkflowLease,
  withRepoToken,
  workflowChannel,
  workflowRun,
} from "@rhumbatron/db";
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
  const run = workflowRun(db, id, { now, leaseSeconds: deps.config.queues.leaseSeconds });
  const recorded = async <T>(name: string, fn: () => Promise<T>, detail: (out: T) => unknown = (o) => o) => {
    const startedAt = now().toISOString();
    const out = await run.step(name, fn);
    const finishedAt = now().toISOString();
    await appendReleaseStep(
      db,
      id,
      { step: name, status: "succeeded", startedAt, finishedAt, detail: detail(out) },
      now(),
    );
    return out;
  };

  const rel = await recorded(
    "load",
    () => loadRelease(db, id),
    (r) => (r ? { generation: r.generation, commit: r.commit, target: (r.target as { kind?: string }).kind } : null),
  );
  if (!rel) {
    await finishWorkflowInstance(db, id, { status: "failed", error: `release ${id} not found` }, now());
    return { releaseId: id, outcome: "failed", error: `release ${id} not found` };
  }
  const retries = deps.retries ?? deps.config.queues.policies.release.maxRetries;
  let result: { status: "succeeded" | "failed"; output: unknown; error: string | null };
  try {
    // An instance that kept crashing outside its steps (its lease lapsing each time) stops here.
    if (claim.attempts > retries + 1) {
      const last = (await db.release.findUnique({ where: { id }, select: { error: true } }))?.error;
      throw new DomainError(
        "PRECONDITION_FAILED",
        `stopped after ${claim.attempts - 1} attempts${last ? `; last error: ${last}` : ""}`,
      );
    }
    await run.txStep("started", async (ctx) => {
      await releaseEvent(ctx, rel, "release.started", { releaseId: id, generation: rel.generation }, deps, now());
      const at = now().toISOString();
      await appendReleaseStep(
        ctx.tx,
        id,
        { step: "started", status: "succeeded", startedAt: at, finishedAt: at },
        now(),
      );
      return true;
    });
    const sync = await recorded("sync", () => syncCanonical({ ...deps, now }, rel.projectId, rel.generation));
    const delivered = await recorded("deliver", () => deliver(deps, rel));
    result = { status: "succeeded", output: { sync: sync.outcome, delivered }, error: null };
  } catch (err) {
    const error = message(err);
    const permanent = isDomainError(err) && PERMANENT.has(err.code);
    const at = now();
    await appendReleaseStep(
      db,
      id,
      {
        step: "attempt",
        status: "failed",
        attempt: claim.attempts,
        startedAt: at.toISOString(),
        finishedAt: at.toISOString(),
        error,
      },
      at,
    );
    if (!permanent && claim.attempts <= retries) {
      const delay = deps.retryDelaySeconds ?? deps.config.queues.policies.release.retryDelaySeconds;
      const retryAt = new Date(at.getTime() + delay * 1000);
      await recordReleaseError(db, id, error);
      await releaseWorkflowLease(db, id, retryAt);
      return { releaseId: id, outcome: "retrying", error, retryAt: retryAt.toISOString() };
    }
    result = { status: "failed", output: null, error };
  }

  const final = await run.txStep("complete", async (ctx) => {
    await completeRelease(ctx, rel, result, deps, now());
    const at = now().toISOString();
    await appendReleaseStep(
      ctx.tx,
      id,
      { step: "complete", status: "succeeded", startedAt: at, finishedAt: at, detail: { outcome: result.status } },
      now(),
    );
    return result;
  });
  await finishWorkflowInstance(db, id, { status: final.status, output: final.output ?? {}, error: final.error }, now());
  return { releaseId: id, outcome: final.status, error: final.error };
}

/** Runs the release instances that are due, one after another (these hosts have two cores). */
export function releaseWorkflowFunction(deps: ReleaseWorkflowDeps): WorkerFunction {
  return {
    id: "release-workflow",
    triggers: { cron: deps.config.queues.pollCron, nudge: workflowChannel("release") },
    retries: 0,
    async handler({ now, logger }) {
      const releases: ReleaseRunOutcome[] = [];
      for (let i = 0; i < 10; i++) {
        const claim = await claimWorkflowInstance(deps.db, "release", now(), deps.config.queues.leaseSeconds);
        if (!claim) break;
        try {
          const r = await runReleaseWorkflow({ ...deps, now }, claim);
          logger.info({ ...r, attempt: claim.attempts }, "release workflow ran");
          releases.push(r);
        } catch (err) {
          // Held by its lease until it runs out; then the next tick replays it from its last step.
          logger.error({ releaseId: claim.instanceId, attempt: claim.attempts, err }, "release workflow crashed");
        }
      }
      return { releases };
    },
  };
}
