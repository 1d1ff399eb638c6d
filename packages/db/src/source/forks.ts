import { AGENT_RUN_STATUS_SETS, CHANGE_STATUS_SETS } from "@rhumbatron/core";
import type { Db } from "../client.ts";

/** The Agent runs of a project that have a workspace fork, and its Candidates (each has one). */
export async function forkOwnersOf(db: Db, projectId: string): Promise<{ runIds: string[]; candidateIds: string[] }> {
  const runs = await db.agentRun.findMany({
    where: { change: { projectId }, fork: { not: null } },
    select: { id: true },
  });
  const candidates = await db.candidate.findMany({ where: { projectId }, select: { id: true } });
  return { runIds: runs.map((r) => r.id), candidateIds: candidates.map((c) => c.id) };
}

/**
 * Forks the sweep may delete, oldest first, at most `limit` of each: runs that ended in a finished
 * Change, and Candidates rejected, stale, or promoted at a generation main already holds
 * (`syncedGeneration`), all created before `cutoff` and not deleted yet.
 */
export async function sweepableForks(
  db: Db,
  projectId: string,
  o: { cutoff: Date; syncedGeneration: number; limit: number },
): Promise<{ runIds: string[]; candidateIds: string[] }> {
  const runs = await db.agentRun.findMany({
    where: {
      change: { projectId, status: { in: [...CHANGE_STATUS_SETS.final] } },
      fork: { not: null },
      forkDeletedAt: null,
      createdAt: { lt: o.cutoff },
      status: { in: [...AGENT_RUN_STATUS_SETS.ended] },
    },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: o.limit,
    select: { id: true },
  });
  const candidates = await db.candidate.findMany({
    where: {
      projectId,
      forkDeletedAt: null,
      createdAt: { lt: o.cutoff },
      OR: [
        { status: { in: ["rejected", "stale"] } },
        { status: "promoted", promotedGeneration: { lte: o.syncedGeneration } },
      ],
    },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: o.limit,
    select: { id: true },
  });
  return { runIds: runs.map((r) => r.id), candidateIds: candidates.map((c) => c.id) };
}
