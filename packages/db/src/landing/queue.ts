import { CHANGE_STATUS_SETS, DomainError, type LandingWait, landingState } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { landingInput } from "./landing.ts";

export interface LandingQueueEntry {
  position: number;
  changeId: string;
  title: string;
  changeStatus: string;
  candidateId: string | null;
  ready: boolean;
  waitingFor: LandingWait;
  detail: string;
  /** When it last moved (the newest Candidate's or the Change's last change). */
  since: Date;
  /** When it joined the queue. */
  landingSince: Date;
  /** Its priority: higher is listed and lands first (0 unless an admin gave it one). */
  priority: number;
  /**
   * The speculative stack (docs/landing.md): the Candidate (and Change) its newest Candidate is
   * composed on, while that one has not landed; null when it is composed on canonical.
   */
  stackedOn: { candidateId: string; changeId: string; title: string } | null;
}

/**
 * A project's landing queue: every Change with "land when ready" that has not landed or been
 * cancelled. Ready ones come first, by priority (an admin's: setLandingPriority) then in the order
 * they became ready (the order the queue lands them), then the others by priority and the order
 * they joined.
 */
export async function listLandingQueue(
  db: Db,
  q: { tenantId: string; projectId: string },
): Promise<LandingQueueEntry[]> {
  const project = await db.project.findFirst({
    where: { id: q.projectId, tenantId: q.tenantId },
    select: { id: true },
  });
  if (!project) throw new DomainError("NOT_FOUND", `project ${q.projectId} not found`);
  const changes = await db.change.findMany({
    where: { projectId: q.projectId, landWhenReady: true, status: { notIn: [...CHANGE_STATUS_SETS.final] } },
    orderBy: [{ landingSince: "asc" }, { id: "asc" }],
    take: 200,
  });
  const entries = await Promise.all(
    changes.map(async (c) => {
      const input = await landingInput(db, c.id);
      const state = landingState(input);
      const candidate = input.candidateId
        ? await db.candidate.findUnique({ where: { id: input.candidateId }, select: { updatedAt: true } })
        : null;
      return {
        changeId: c.id,
        title: c.title,
        changeStatus: c.status,
        candidateId: input.candidateId,
        ready: state.ready,
        waitingFor: state.waitingFor,
        detail: state.detail,
        since: candidate?.updatedAt ?? c.landingSince ?? c.createdAt,
        landingSince: c.landingSince ?? c.createdAt,
        priority: c.landingPriority,
        stackedOn:
          input.stackedOn && input.stackedOnCandidate
            ? { candidateId: input.stackedOnCandidate, ...input.stackedOn }
            : null,
      };
    }),
  );
  // A Change promoted or cancelled between the list and its own read has left the queue: the
  // reads are not one snapshot, and a queue never lists what has already landed.
  const waiting = entries.filter((e) => e.waitingFor !== "landed" && e.waitingFor !== "cancelled");
  const ordered = [
    ...waiting.filter((e) => e.ready).sort((a, b) => b.priority - a.priority || a.since.getTime() - b.since.getTime()),
    ...waiting.filter((e) => !e.ready).sort((a, b) => b.priority - a.priority),
  ];
  return ordered.map((e, i) => ({ position: i + 1, ...e }));
}
