import { commandIds, QUEUE_FOR_COMMAND } from "@rhumbatron/core";
import { appendToOutbox, buildCommand, type EnqueueDeps, putOnQueue } from "@rhumbatron/runtime";
import { changeEvent } from "../events/factory.ts";
import type { LockedChange } from "../events/owners.ts";
import type { TxContext } from "../transaction.ts";

const HOUR_MS = 3600 * 1000;

/** A recomposition request: canonical advanced under the Change's Candidate. */
export interface Recompose {
  /** The Candidate that went stale. */
  from: string;
  /** The generation canonical advanced to. */
  generation: number;
}

/**
 * The bound on automatic recomposition: at most config.integration.recompositionsPerChangePerHour
 * Candidates per Change in any rolling hour. Null when one more may be made now; otherwise why not,
 * and when the oldest Candidate in the window leaves it.
 */
export async function recompositionHeld(
  ctx: TxContext,
  changeId: string,
  deps: EnqueueDeps,
): Promise<{ reason: string; retryAt: Date } | null> {
  const limit = deps.config.integration.recompositionsPerChangePerHour;
  const now = deps.now();
  const recent = await ctx.tx.candidate.findMany({
    where: { changeId, createdAt: { gt: new Date(now.getTime() - HOUR_MS) } },
    orderBy: { createdAt: "asc" },
    select: { createdAt: true },
  });
  const oldest = recent[0];
  if (recent.length < limit || !oldest) return null;
  const retryAt = new Date(oldest.createdAt.getTime() + HOUR_MS);
  return {
    reason: `held: ${recent.length} Candidates in the last hour reach the limit of ${limit} per Change; recomposes at ${retryAt.toISOString()}`,
    retryAt,
  };
}

/** Says why the recomposition waits (an Event on the Change) and sends the same request again for when it may run. */
export async function holdRecomposition(
  ctx: TxContext,
  owner: LockedChange,
  changeId: string,
  recompose: Recompose,
  held: { reason: string; retryAt: Date },
  deps: EnqueueDeps,
  causedBy: string | null,
): Promise<void> {
  const at = held.retryAt.getTime();
  await appendToOutbox(
    ctx,
    [
      changeEvent(owner, "candidate.recomposition_held", {
        key: `${recompose.generation}:${at}`,
        actor: { kind: "system", id: "composer" },
        causedBy,
        now: deps.now(),
        payload: { staleCandidateId: recompose.from, generation: recompose.generation, reason: held.reason },
      }),
    ],
    deps,
  );
  // Keyed by the time it may run: a redelivered request that is held again asks for the same copy.
  const envelope = buildCommand(
    {
      commandType: "candidate.create",
      commandId: commandIds.recomposeHeld(changeId, recompose.generation, at),
      projectId: owner.projectId,
      changeId,
      taskId: null,
      payload: { recomposeFrom: recompose.from, generation: recompose.generation, held: true },
    },
    deps.now(),
  );
  await putOnQueue(ctx, QUEUE_FOR_COMMAND["candidate.create"], envelope, deps, { availableAt: held.retryAt });
}

/** "recomposed on generation 7 after chg_… was promoted", from the generation's own record. */
export async function recomposeReason(ctx: TxContext, projectId: string, generation: number): Promise<string> {
  const gen = await ctx.tx.canonicalGeneration.findUnique({
    where: { projectId_generation: { projectId, generation } },
    select: { candidateId: true },
  });
  const promoted = gen?.candidateId
    ? await ctx.tx.candidate.findUnique({ where: { id: gen.candidateId }, select: { changeId: true } })
    : null;
  return promoted
    ? `recomposed on generation ${generation} after ${promoted.changeId} was promoted`
    : `recomposed on generation ${generation}`;
}
