import {
  candidateDecision,
  checkPromotionPreconditions,
  DomainError,
  type RhumbatronConfig,
  type VerificationPlan,
  type withReviewGaps,
} from "@rhumbatron/core";
import { actorName, namesOf, REMOVED_USER, userIdsOf } from "../auth/people.ts";
import type { Db } from "../client.ts";
import { conflictReviewOf } from "../reviews/conflict-reviews.ts";
import { readGate } from "./gate-reading.ts";
import { activeVerificationPolicy } from "./project-policy.ts";
import { candidateRerunOptions } from "./rerun.ts";

/**
 * A tenant's Candidates, newest first, each with its Change's title (`changeTitle`, null if the
 * Change is not found) beside the Candidate's own columns; another tenant's are NOT_FOUND.
 */
export async function listCandidates(db: Db, q: { tenantId: string; projectId: string; limit: number }) {
  const project = await db.project.findFirst({
    where: { id: q.projectId, tenantId: q.tenantId },
    select: { id: true },
  });
  if (!project) throw new DomainError("NOT_FOUND", `project ${q.projectId} not found`);
  const candidates = await db.candidate.findMany({
    where: { projectId: q.projectId },
    orderBy: { createdAt: "desc" },
    take: q.limit,
  });
  const changes = await db.change.findMany({
    where: { id: { in: [...new Set(candidates.map((c) => c.changeId))] }, projectId: q.projectId },
    select: { id: true, title: true },
  });
  const titles = new Map(changes.map((c) => [c.id, c.title]));
  return candidates.map((c) => ({ ...c, changeTitle: titles.get(c.changeId) ?? null }));
}

/** `config` for the project's active policy (its rerun budget: the reruns each check still has). */
export async function getCandidate(db: Db, q: { tenantId: string; candidateId: string }, config: RhumbatronConfig) {
  const c = await db.candidate.findUnique({ where: { id: q.candidateId } });
  const project = c
    ? await db.project.findFirst({ where: { id: c.projectId, tenantId: q.tenantId }, select: { id: true } })
    : null;
  if (!c || !project) throw new DomainError("NOT_FOUND", `candidate ${q.candidateId} not found`);
  const changeSets = await db.changeSet.findMany({ where: { id: { in: c.changeSetIds } } });
  const workflow = await db.workflowInstance.findUnique({ where: { instanceId: c.id } });
  const evidence = await evidenceOf(db, c.id);
  const approval = await db.approval.findUnique({ where: { candidateId: c.id } });
  const plan = c.plan as VerificationPlan | null;
  // The gate from the rows as they are now (the same reading promotion makes, review findings included).
  const gate = plan ? await readGate(db, c, plan) : null;
  const reruns = await db.checkRerun.findMany({ where: { candidateId: c.id }, orderBy: { requestedAt: "asc" } });
  const rerunOptions = await candidateRerunOptions(db, c.id, config);
  const people = await namesOf(db, [approval?.decidedBy]);
  const promotion = c.status === "promoted" ? await promotionOf(db, c.projectId, c.id) : null;
  const replacedBy = await replacementOf(db, c.id);
  const change = await db.change.findUnique({
    where: { id: c.changeId },
    select: { title: true, landWhenReady: true },
  });
  const decision = candidateDecision({
    status: c.status,
    approval: {
      required: c.approvalRequired,
      state: approval ? approval.decision : c.approvalRequired ? "pending" : "not_required",
      byName: approval ? (people.get(approval.decidedBy) ?? REMOVED_USER) : null,
      reasons: plan?.humanGateReasons ?? [],
    },
    checks: (plan?.checks ?? []).map((k) => ({ checkId: k.id, recorded: evidence.some((e) => e.checkId === k.id) })),
    gaps: gate?.gaps ?? [],
    rejectionReason: c.rejectionReason,
    promotionBlocks: c.status === "verified" ? await promotionBlocks(db, c, plan, gate, approval, config) : [],
    promotion,
    replacedBy: replacedBy?.id ?? null,
    rerunnable: rerunOptions.filter((o) => o.refusal === null).map((o) => o.checkId),
    landsByQueue: change?.landWhenReady === true,
  });
  return {
    ...c,
    /** The Change's title, for the page's heading (null only for a Change deleted since). */
    changeTitle: change?.title ?? null,
    // In composition order, with each ChangeSet's stored patch reference.
    changeSets: c.changeSetIds.flatMap((id) => changeSets.filter((cs) => cs.id === id)),
    plan,
    evidence,
    gate,
    gaps: gate?.gaps ?? [],
    approval: {
      required: c.approvalRequired,
      state: approval ? approval.decision : c.approvalRequired ? "pending" : "not_required",
      decision: approval,
    },
    /** Each planned check: reruns used and allowed, and why it cannot be rerun now (null: it can). */
    rerunOptions,
    reruns,
    /** The conflict review (null: no two Tasks changed one file), each finding with its citations resolved. */
    conflictReview: await conflictReviewOf(db, c.id),
    verification: workflow
      ? { status: workflow.status, startedAt: workflow.startedAt, finishedAt: workflow.finishedAt }
      : null,
    /** What the reader needs first: the state, why, and the only actions it allows. */
    decision,
    /** People by name (user ID -> name) for the IDs this view shows. */
    people: Object.fromEntries(people),
    promotion,
    replacedBy: replacedBy?.id ?? null,
  };
}

/** A Candidate's Evidence, oldest first. */
async function evidenceOf(db: Db, candidateId: string) {
  const rows = await db.evidence.findMany({ where: { candidateId }, orderBy: [{ completedAt: "asc" }] });
  // A reused record names the pass it copies and that pass's Candidate (docs/checks-file.md,
  // Reused Evidence).
  const sources = await db.evidence.findMany({
    where: { id: { in: rows.flatMap((e) => e.reusedFrom ?? []) } },
    select: { id: true, candidateId: true },
  });
  const sourceCandidate = new Map(sources.map((e) => [e.id, e.candidateId]));
  return rows.map((e) => ({
    ...e,
    reusedFrom: e.reusedFrom
      ? { evidenceId: e.reusedFrom, candidateId: sourceCandidate.get(e.reusedFrom) ?? null }
      : null,
  }));
}

/** The newest Candidate recomposed from this one, if any. */
async function replacementOf(db: Db, candidateId: string) {
  return await db.candidate.findFirst({
    where: { recomposedFrom: candidateId },
    orderBy: { createdAt: "desc" },
    select: { id: true },
  });
}

/** When, as which generation and by whom a Candidate was promoted (the landing queue when no person). */
async function promotionOf(db: Db, projectId: string, candidateId: string) {
  const gen = await db.canonicalGeneration.findFirst({ where: { projectId, candidateId } });
  if (!gen) return null;
  const event = await db.outboxRow.findFirst({
    where: {
      projectId,
      eventType: "artifact.promoted",
      envelope: { path: ["payload", "candidateId"], equals: candidateId },
    },
    select: { envelope: true },
  });
  const actor = (event?.envelope as { actor?: { kind?: string; id?: string } } | undefined)?.actor ?? {};
  return {
    generation: gen.generation,
    at: gen.createdAt,
    byName: actorName(actor, await namesOf(db, userIdsOf([actor]))),
  };
}

/** What would refuse a verified Candidate's promotion now, beside a pending approval (the same rules promotion applies). */
async function promotionBlocks(
  db: Db,
  c: {
    projectId: string;
    status: string;
    baseGeneration: number;
    composedTree: string | null;
    approvalRequired: boolean;
  },
  plan: VerificationPlan | null,
  gate: ReturnType<typeof withReviewGaps> | null,
  approval: { decision: string; treeHash: string; decidedBy: string; note: string | null } | null,
  config: RhumbatronConfig,
): Promise<string[]> {
  const project = await db.project.findUniqueOrThrow({
    where: { id: c.projectId },
    select: { canonicalGeneration: true },
  });
  const policy = await activeVerificationPolicy(db, c.projectId, config);
  const r = checkPromotionPreconditions({
    candidateStatus: c.status,
    baseGeneration: c.baseGeneration,
    canonicalGeneration: project.canonicalGeneration,
    plan,
    gate,
    approvalRequired: c.approvalRequired,
    approval: approval
      ? {
          kind: approval.decision as "granted" | "rejected",
          treeHash: approval.treeHash,
          by: approval.decidedBy,
          note: approval.note,
        }
      : null,
    composedTree: c.composedTree,
    activePolicy: { id: policy.id, version: policy.version },
    // Promotion itself checks the fork; a read does not touch git.
    composedCommitInFork: true,
  });
  return r.ok ? [] : r.blocks.filter((b) => b !== "approval is pending");
}

/** A Candidate's status, or null when there is no such Candidate. */
export async function candidateStatusOf(db: Db, candidateId: string): Promise<string | null> {
  return (await db.candidate.findUnique({ where: { id: candidateId }, select: { status: true } }))?.status ?? null;
}
