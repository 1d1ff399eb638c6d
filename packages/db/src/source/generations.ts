import type { Db } from "../client.ts";

/** What a generation's tag tells a reader of `git log`: which Change it landed and who let it. */
export interface GenerationFacts {
  generation: number;
  commit: string;
  changeId: string | null;
  changeTitle: string | null;
  candidateId: string | null;
  /** The approver as "Name <email>", or null when the policy asked for no approval. */
  approvedBy: string | null;
}

/** The facts of generations first..last (S0 has no Change). */
export async function generationFacts(
  db: Db,
  projectId: string,
  first: number,
  last: number,
): Promise<GenerationFacts[]> {
  const rows = await db.canonicalGeneration.findMany({
    where: { projectId, generation: { gte: first, lte: last } },
    orderBy: { generation: "asc" },
  });
  const candidateIds = rows.flatMap((r) => (r.candidateId ? [r.candidateId] : []));
  const candidates = await db.candidate.findMany({
    where: { id: { in: candidateIds } },
    select: { id: true, changeId: true, approval: { select: { decision: true, decidedBy: true } } },
  });
  const changes = await db.change.findMany({
    where: { id: { in: candidates.map((c) => c.changeId) } },
    select: { id: true, title: true },
  });
  const approvers = candidates.flatMap((c) => (c.approval?.decision === "granted" ? [c.approval.decidedBy] : []));
  const users = await db.user.findMany({
    where: { id: { in: approvers } },
    select: { id: true, name: true, email: true },
  });
  return rows.map((r) => {
    const candidate = candidates.find((c) => c.id === r.candidateId);
    const change = changes.find((c) => c.id === candidate?.changeId);
    const approver = candidate?.approval?.decision === "granted" ? candidate.approval.decidedBy : null;
    const user = users.find((u) => u.id === approver);
    return {
      generation: r.generation,
      commit: r.commit,
      changeId: change?.id ?? null,
      changeTitle: change?.title ?? null,
      candidateId: r.candidateId,
      approvedBy: approver === null ? null : user ? `${user.name} <${user.email}>` : approver,
    };
  });
}

/** One generation's row as the source sync and the indexer read it. */
export interface GenerationRow {
  generation: number;
  commit: string;
  tree: string;
  candidateId: string | null;
}

const GENERATION_ROW = { generation: true, commit: true, tree: true, candidateId: true } as const;

/** Generation `generation` of a project, or null. */
export async function generationOf(db: Db, projectId: string, generation: number): Promise<GenerationRow | null> {
  return db.canonicalGeneration.findUnique({
    where: { projectId_generation: { projectId, generation } },
    select: GENERATION_ROW,
  });
}

/** The newest generation whose commit is `commit` (main's head names one), or null. */
export async function generationAtCommit(db: Db, projectId: string, commit: string): Promise<GenerationRow | null> {
  return db.canonicalGeneration.findFirst({
    where: { projectId, commit },
    orderBy: { generation: "desc" },
    select: GENERATION_ROW,
  });
}

/** Generations first..last of a project, oldest first (a missing one is simply absent). */
export async function generationsBetween(
  db: Db,
  projectId: string,
  first: number,
  last: number,
): Promise<GenerationRow[]> {
  return db.canonicalGeneration.findMany({
    where: { projectId, generation: { gte: first, lte: last } },
    orderBy: { generation: "asc" },
    select: GENERATION_ROW,
  });
}
