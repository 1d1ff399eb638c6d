import { type BlobStore, compareOwnDiffs, DomainError, sourceKeys } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import type { TxContext } from "../transaction.ts";

type Reader = Db | TxContext["tx"];

/**
 * What an approver needs before approving a Candidate of a Change they approved before (a
 * recomposition): the earlier approval, whether the tree is the same, whether the Change's own diff
 * is the same (core: compareOwnDiffs, on the stored Candidate patches) and what the promotions
 * between the two bases changed, marking the files this Change touches too. Null when nobody has
 * approved another Candidate of the Change.
 */
export interface ApprovalInterdiff {
  since: { candidateId: string; treeHash: string; approvedBy: string; approvedAt: Date; baseGeneration: number };
  treeIdentical: boolean;
  sameChangeSets: boolean;
  /** unchanged null: a patch is missing or was truncated, so the diffs could not be compared. */
  ownDiff: { unchanged: boolean | null; differingFiles: string[] };
  base: {
    fromGeneration: number;
    toGeneration: number;
    promotions: { generation: number; candidateId: string | null; changeId: string | null; title: string | null }[];
    /** Files the promotions in between changed; underChange when this Change's ChangeSets touch them too. */
    files: { path: string; underChange: boolean }[];
  };
}

/** The latest granted approval of another Candidate of the Change (with the tree, when given). */
export function earlierApproval(db: Reader, changeId: string, candidateId: string, treeHash?: string) {
  return db.approval.findFirst({
    where: {
      decision: "granted",
      candidateId: { not: candidateId },
      candidate: { changeId },
      ...(treeHash ? { treeHash } : {}),
    },
    orderBy: { decidedAt: "desc" },
    include: { candidate: true },
  });
}

export async function approvalInterdiff(
  db: Db,
  blobs: BlobStore,
  q: { tenantId: string; candidateId: string },
): Promise<ApprovalInterdiff | null> {
  const c = await db.candidate.findUnique({ where: { id: q.candidateId } });
  const project = c
    ? await db.project.findFirst({ where: { id: c.projectId, tenantId: q.tenantId }, select: { id: true } })
    : null;
  if (!c || !project) throw new DomainError("NOT_FOUND", `candidate ${q.candidateId} not found`);
  const prior = await earlierApproval(db, c.changeId, c.id);
  if (!prior) return null;
  const before = prior.candidate;

  const patchOf = async (id: string) => {
    const blob = await blobs.get(sourceKeys.candidatePatch(c.projectId, id));
    return blob && blob.metadata.truncated !== "true" ? new TextDecoder().decode(blob.body) : null;
  };
  const [patchBefore, patchAfter] = await Promise.all([patchOf(before.id), patchOf(c.id)]);
  const own =
    patchBefore !== null && patchAfter !== null
      ? compareOwnDiffs(patchBefore, patchAfter)
      : { unchanged: null, differingFiles: [] };

  const from = Math.min(before.baseGeneration, c.baseGeneration);
  const to = Math.max(before.baseGeneration, c.baseGeneration);
  const generations = await db.canonicalGeneration.findMany({
    where: { projectId: c.projectId, generation: { gt: from, lte: to } },
    orderBy: { generation: "asc" },
  });
  const promoted = await db.candidate.findMany({
    where: { id: { in: generations.flatMap((g) => (g.candidateId ? [g.candidateId] : [])) } },
    select: { id: true, changeId: true, changeSetIds: true },
  });
  const titles = await db.change.findMany({
    where: { id: { in: promoted.map((p) => p.changeId) } },
    select: { id: true, title: true },
  });
  const [theirSets, ownSets] = await Promise.all([
    db.changeSet.findMany({ where: { id: { in: promoted.flatMap((p) => p.changeSetIds) } }, select: { paths: true } }),
    db.changeSet.findMany({ where: { id: { in: c.changeSetIds } }, select: { paths: true } }),
  ]);
  const mine = new Set(ownSets.flatMap((s) => s.paths));
  const files = [...new Set(theirSets.flatMap((s) => s.paths))]
    .sort()
    .map((path) => ({ path, underChange: mine.has(path) }));

  return {
    since: {
      candidateId: before.id,
      treeHash: prior.treeHash,
      approvedBy: prior.decidedBy,
      approvedAt: prior.decidedAt,
      baseGeneration: before.baseGeneration,
    },
    treeIdentical: c.composedTree !== null && c.composedTree === prior.treeHash,
    sameChangeSets: before.changeSetIds.join(",") === c.changeSetIds.join(","),
    ownDiff: own,
    base: {
      fromGeneration: before.baseGeneration,
      toGeneration: c.baseGeneration,
      promotions: generations.map((g) => {
        const p = promoted.find((x) => x.id === g.candidateId);
        return {
          generation: g.generation,
          candidateId: g.candidateId,
          changeId: p?.changeId ?? null,
          title: titles.find((t) => t.id === p?.changeId)?.title ?? null,
        };
      }),
      files,
    },
  };
}
