import type { EventPayload } from "@rhumbatron/core";
import { appendToOutbox, type OutboxDeps } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { changeEvent } from "../events/factory.ts";
import { lockResourceRow } from "../events/owners.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import type { TxContext } from "../transaction.ts";

/**
 * The release workflow's state changes (apps/worker runs the steps: source sync, delivery): the
 * step log in releases.steps, the last error of a failed attempt, and the final status with
 * release.completed in one transaction.
 */
/** One entry of releases.steps, as the ReleaseWorkflow appends them (apps/worker/src/release/workflow.ts). */
export interface ReleaseStep {
  step: string;
  status: "succeeded" | "failed";
  startedAt: string;
  finishedAt: string;
  attempt?: number;
  detail?: unknown;
  error?: string;
}

/** Appends a step to releases.steps once: a replayed step finds its entry there already. */
export async function appendReleaseStep(db: Db | TxContext["tx"], releaseId: string, e: ReleaseStep, now: Date) {
  const key = { step: e.step, status: e.status, ...(e.attempt === undefined ? {} : { attempt: e.attempt }) };
  await db.$executeRaw`
    UPDATE releases SET steps = steps || ${JSON.stringify([e])}::jsonb, updated_at = ${now}
    WHERE id = ${releaseId} AND NOT steps @> ${JSON.stringify([key])}::jsonb`;
}

export async function loadRelease(db: Db, releaseId: string) {
  const r = await db.release.findUnique({ where: { id: releaseId } });
  if (!r) return null;
  const c = r.candidateId
    ? await db.candidate.findUnique({ where: { id: r.candidateId }, select: { changeId: true } })
    : null;
  return {
    id: r.id,
    projectId: r.projectId,
    generation: r.generation,
    commit: r.commit,
    tree: r.tree,
    target: r.target,
    changeId: c?.changeId ?? null,
  };
}
export type LoadedRelease = NonNullable<Awaited<ReturnType<typeof loadRelease>>>;

/** A release Event on the Candidate's Change (resource shard); a release without a Candidate has none. */
export async function releaseEvent<T extends "release.started" | "release.completed">(
  ctx: TxContext,
  rel: LoadedRelease,
  type: T,
  payload: EventPayload<T>,
  deps: OutboxDeps,
  now: Date,
) {
  if (!rel.changeId) return;
  const owner = await lockResourceRow(ctx, `change:${rel.changeId}`);
  const event = changeEvent(owner, type, {
    key: rel.id,
    actor: { kind: "system", id: "release" },
    now,
    payload,
  });
  await appendToOutbox(ctx, [event], deps);
}

/** A failed attempt that will be retried: its error is shown while the release waits. */
export async function recordReleaseError(db: Db, releaseId: string, error: string): Promise<void> {
  await db.release.updateMany({ where: { id: releaseId, status: "running" }, data: { error } });
}

/** The release's final status, with release.completed when this call moved it (a replay writes nothing). */
export async function completeRelease(
  ctx: TxContext,
  rel: LoadedRelease,
  result: { status: "succeeded" | "failed"; output: unknown; error: string | null },
  deps: OutboxDeps,
  now: Date,
): Promise<boolean> {
  const moved = await ctx.tx.release.updateMany({
    where: { id: rel.id, status: "running" },
    data: {
      status: result.status,
      output: (result.output ?? undefined) as Prisma.InputJsonValue | undefined,
      error: result.error,
    },
  });
  if (moved.count !== 1) return false;
  await releaseEvent(ctx, rel, "release.completed", { releaseId: rel.id, outcome: result.status }, deps, now);
  return true;
}

/** The last error a release recorded, or null. */
export async function releaseErrorOf(db: Db, releaseId: string): Promise<string | null> {
  return (await db.release.findUnique({ where: { id: releaseId }, select: { error: true } }))?.error ?? null;
}
