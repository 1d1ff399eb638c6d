import { DomainError, storedAgentChoice } from "@rhumbatron/core";
import { actorName, namesOf, userIdsOf } from "../auth/people.ts";
import type { Db } from "../client.ts";
import { type GenerationPeople, generationPeople } from "./generation-people.ts";

/** A project of this tenant, or NOT_FOUND (another tenant's project is answered like a missing one). */
export async function projectOfTenant(db: Db, tenantId: string, projectId: string) {
  const project = await db.project.findFirst({
    where: { id: projectId, tenantId },
    select: {
      id: true,
      name: true,
      status: true,
      canonicalGeneration: true,
      createdAt: true,
      updatedAt: true,
      sourceKind: true,
      sourceUrl: true,
      sourceBranch: true,
      sourceSubmodules: true,
      failureReason: true,
      agent: true,
    },
  });
  if (!project) throw new DomainError("NOT_FOUND", `project ${projectId} not found`);
  // The stored choice as the schema reads it (null: the worker's default).
  return { ...project, agent: storedAgentChoice(project.agent) };
}

export interface GenerationEntry {
  generation: number;
  commit: string;
  tree: string;
  /** The promoted Candidate; null for S0 (the template). */
  candidateId: string | null;
  changeId: string | null;
  changeTitle: string | null;
  createdAt: Date;
  /** Who promoted it and who approved its tree, by name (null for S0). */
  promotedBy: GenerationPeople["promotedBy"];
  approvedBy: string | null;
}

type Counts = Record<string, number>;

export interface ProjectViewCounts {
  canonicalGeneration: number;
  changesTotal: number;
  changesByState: Counts;
  tasksByState: Counts;
  candidatesByState: Counts;
  eventCount: number;
  lastEventType: string | null;
  lastEventAt: Date | null;
}

/**
 * What a project's overview shows: the project, its canonical generations (S0, S1, …) each with
 * the Candidate and Change it came from, and the counts of the project view the projector keeps.
 * `view` is null until the projector has applied the project's first Event.
 */
export async function getProjectOverview(db: Db, q: { tenantId: string; projectId: string }) {
  const project = await projectOfTenant(db, q.tenantId, q.projectId);
  const rows = await db.canonicalGeneration.findMany({
    where: { projectId: project.id },
    orderBy: { generation: "asc" },
  });
  const candidateIds = rows.flatMap((r) => (r.candidateId ? [r.candidateId] : []));
  const candidates = await db.candidate.findMany({
    where: { id: { in: candidateIds }, projectId: project.id },
    select: { id: true, changeId: true },
  });
  const changes = await db.change.findMany({
    where: { id: { in: candidates.map((c) => c.changeId) }, projectId: project.id },
    select: { id: true, title: true },
  });
  const people = await generationPeople(db, project.id, rows);
  const generations: GenerationEntry[] = rows.map((r) => {
    const changeId = candidates.find((c) => c.id === r.candidateId)?.changeId ?? null;
    return {
      generation: r.generation,
      commit: r.commit,
      tree: r.tree,
      candidateId: r.candidateId,
      changeId,
      changeTitle: changes.find((c) => c.id === changeId)?.title ?? null,
      createdAt: r.createdAt,
      promotedBy: people.get(r.generation)?.promotedBy ?? null,
      approvedBy: people.get(r.generation)?.approvedBy ?? null,
    };
  });
  return { project, generations, view: await projectViewCounts(db, project.id) };
}

async function projectViewCounts(db: Db, projectId: string): Promise<ProjectViewCounts | null> {
  const view = await db.projectView.findUnique({ where: { projectId } });
  if (!view) return null;
  const changes = await db.projectViewEntity.groupBy({
    by: ["state"],
    where: { projectId, kind: "change" },
    _count: { _all: true },
  });
  const candidates = await db.candidate.groupBy({ by: ["status"], where: { projectId }, _count: { _all: true } });
  return {
    canonicalGeneration: view.canonicalGeneration,
    changesTotal: view.changesTotal,
    changesByState: Object.fromEntries(changes.map((c) => [c.state, c._count._all])),
    tasksByState: asCounts(view.tasksByState),
    // From the Candidates themselves: the projector's count follows Events, and a Candidate cancelled
    // with its Change writes none of its own, so it stayed counted as what it last was.
    candidatesByState: Object.fromEntries(candidates.map((c) => [c.status, c._count._all])),
    eventCount: view.eventCount,
    lastEventType: view.lastEventType,
    lastEventAt: view.lastEventAt,
  };
}

function asCounts(json: unknown): Counts {
  if (!json || typeof json !== "object" || Array.isArray(json)) return {};
  return Object.fromEntries(Object.entries(json).filter((e): e is [string, number] => typeof e[1] === "number"));
}

export interface FeedEvent {
  /** The feed row's ID as a decimal string: the cursor a live subscription resumes after. */
  id: string;
  eventId: string;
  eventType: string;
  changeId: string | null;
  taskId: string | null;
  actor: string;
  /** Who, as people read it: a user's name, or what the system actor is called. */
  actorName: string;
  summary: string;
  occurredAt: Date;
}

/**
 * The project's live feed (project_events), oldest first. With no cursor: the latest `limit`
 * rows; with one: the rows written after it (the feed's IDs only grow).
 */
export async function projectFeedAfter(
  db: Db,
  q: { projectId: string; afterId: bigint | null; limit: number },
): Promise<FeedEvent[]> {
  const rows =
    q.afterId === null
      ? (
          await db.projectEvent.findMany({ where: { projectId: q.projectId }, orderBy: { id: "desc" }, take: q.limit })
        ).reverse()
      : await db.projectEvent.findMany({
          where: { projectId: q.projectId, id: { gt: q.afterId } },
          orderBy: { id: "asc" },
          take: q.limit,
        });
  const names = await namesOf(db, userIdsOf(rows.map((r) => r.actor)));
  return rows.map((r) => ({
    id: r.id.toString(),
    eventId: r.eventId,
    eventType: r.eventType,
    changeId: r.changeId,
    taskId: r.taskId,
    actor: r.actor,
    actorName: actorName(r.actor, names),
    summary: r.summary,
    occurredAt: r.occurredAt,
  }));
}
