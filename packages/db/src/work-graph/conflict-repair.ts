import type { RhumbatronConfig } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import type { TxContext } from "../transaction.ts";
import { retryTaskIn } from "./retry-task.ts";
import type { WorkGraphDeps } from "./shared.ts";

/** The system actor of an automatic repair, as task.retried names it. */
export const CONFLICT_REPAIR_ACTOR = { kind: "system" as const, id: "conflict-repair" };

/**
 * Automatic repair of a conflict (docs/landing.md): a Candidate that could not be composed because
 * another Change landed first on the same lines re-runs, by itself, the Tasks whose ChangeSets
 * conflicted, on the generation current now, up to config.integration.conflictRepairsPerChange
 * times per Change; past it the Change stays conflicted for a person, with the conflict shown.
 * Called in the transaction that records the rejection; returns the Task keys it re-ran.
 */
export async function repairConflict(
  ctx: TxContext,
  c: { changeId: string; tenantId: string; taskKeys: readonly string[] },
  deps: WorkGraphDeps & { config: Pick<RhumbatronConfig, "integration"> },
): Promise<string[]> {
  if (c.taskKeys.length === 0) return [];
  const change = await ctx.tx.change.findUniqueOrThrow({
    where: { id: c.changeId },
    select: { conflictRepairs: true, status: true },
  });
  if (change.status !== "conflicted") return [];
  if (change.conflictRepairs >= deps.config.integration.conflictRepairsPerChange) return [];
  const tasks = await ctx.tx.task.findMany({
    where: { changeId: c.changeId, key: { in: [...c.taskKeys] }, state: "completed" },
    orderBy: { position: "asc" },
    select: { id: true, key: true },
  });
  if (tasks.length === 0) return [];
  await ctx.tx.change.update({ where: { id: c.changeId }, data: { conflictRepairs: { increment: 1 } } });
  for (const t of tasks)
    await retryTaskIn(ctx, { tenantId: c.tenantId, taskId: t.id, actor: CONFLICT_REPAIR_ACTOR }, deps);
  return tasks.map((t) => t.key);
}

/**
 * The Candidate whose composition conflicted, when it is still its Change's newest: a run of one of
 * its Tasks now is the repair, and is told the conflict (the worker keeps it by this Candidate).
 */
export async function conflictedCandidateOf(db: Db, changeId: string): Promise<string | null> {
  const newest = await db.candidate.findFirst({
    where: { changeId },
    orderBy: { createdAt: "desc" },
    select: { id: true, rejectionReason: true },
  });
  return newest?.rejectionReason === "merge conflict" ? newest.id : null;
}
