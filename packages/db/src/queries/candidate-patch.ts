import { type BlobStore, DomainError, sourceKeys, type VerificationPlan } from "@rhumbatron/core";
import type { Db } from "../client.ts";

export type CandidatePatch =
  | { key: string; stored: false }
  | { key: string; stored: true; text: string; bytes: number; truncated: boolean; fullBytes: number | null };

/**
 * The composed Candidate's patch against its base (written by the verification workflow at
 * `source/<project>/patches/candidates/<candidate>.patch`). Another tenant's Candidate is
 * NOT_FOUND; a Candidate whose patch was never stored (not composed yet, or empty) says so.
 */
export async function readCandidatePatch(
  db: Db,
  blobs: BlobStore,
  q: { tenantId: string; candidateId: string },
): Promise<CandidatePatch> {
  const c = await db.candidate.findUnique({ where: { id: q.candidateId }, select: { id: true, projectId: true } });
  const project = c
    ? await db.project.findFirst({ where: { id: c.projectId, tenantId: q.tenantId }, select: { id: true } })
    : null;
  if (!c || !project) throw new DomainError("NOT_FOUND", `candidate ${q.candidateId} not found`);
  const key = sourceKeys.candidatePatch(c.projectId, c.id);
  const blob = await blobs.get(key);
  if (!blob) return { key, stored: false };
  const fullBytes = Number(blob.metadata.fullSize);
  return {
    key,
    stored: true,
    text: new TextDecoder().decode(blob.body),
    bytes: blob.body.byteLength,
    truncated: blob.metadata.truncated === "true",
    fullBytes: Number.isFinite(fullBytes) && blob.metadata.fullSize !== undefined ? fullBytes : null,
  };
}

export type CandidateChecks =
  | { source: "file"; path: string; commit: string }
  | { source: "detected"; commit: string; reasons: string[]; proposal: string | null }
  | { source: "none" };

/**
 * Where a Candidate's checks came from: the base's checks file, or the checks detected at the base
 * with the file that would declare them (the text to commit as .rhumbatron/checks.yml), or none yet
 * (not planned). Another tenant's Candidate is NOT_FOUND.
 */
export async function readCandidateChecks(
  db: Db,
  blobs: BlobStore,
  q: { tenantId: string; candidateId: string },
): Promise<CandidateChecks> {
  const c = await db.candidate.findUnique({ where: { id: q.candidateId }, select: { projectId: true, plan: true } });
  const project = c
    ? await db.project.findFirst({ where: { id: c.projectId, tenantId: q.tenantId }, select: { id: true } })
    : null;
  if (!c || !project) throw new DomainError("NOT_FOUND", `candidate ${q.candidateId} not found`);
  const source = (c.plan as VerificationPlan | null)?.checksSource;
  if (!source) return { source: "none" };
  if (source.kind === "file") return { source: "file", path: source.path, commit: source.commit };
  const blob = await blobs.get(source.proposalKey);
  return {
    source: "detected",
    commit: source.commit,
    reasons: source.reasons,
    proposal: blob ? new TextDecoder().decode(blob.body) : null,
  };
}
