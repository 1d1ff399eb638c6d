import {
  DomainError,
  gateRequiredChecks,
  type RhumbatronConfig,
  type VerificationPlan,
  withReviewGaps,
} from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { conflictFindingsOf, conflictReviewOf } from "../reviews/conflict-reviews.ts";
import { candidateRerunOptions } from "./rerun.ts";
import { evidenceOf } from "./workflow-state.ts";

/** A tenant's Candidates; another tenant's are NOT_FOUND. */
export async function listCandidates(db: Db, q: { tenantId: string; projectId: string; limit: number }) {
  const project = await db.project.findFirst({
    where: { id: q.projectId, tenantId: q.tenantId },
    select: { id: true },
  });
  if (!project) throw new DomainError("NOT_FOUND", `project ${q.projectId} not found`);
  return db.candidate.findMany({ where: { projectId: q.projectId }, orderBy: { createdAt: "desc" }, take: q.limit });
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
  const evidence = await db.evidence.findMany({ where: { candidateId: c.id }, orderBy: [{ completedAt: "asc" }] });
  const approval = await db.approval.findUnique({ where: { candidateId: c.id } });
  const plan = c.plan as VerificationPlan | null;
  // The gate from the rows as they are now (the same reading promotion makes, review findings included).
  const gate = plan
    ? withReviewGaps(gateRequiredChecks(plan, await evidenceOf(db, c.id)), await conflictFindingsOf(db, c.id))
    : null;
  const reruns = await db.checkRerun.findMany({ where: { candidateId: c.id }, orderBy: { requestedAt: "asc" } });
  return {
    ...c,
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
    rerunOptions: await candidateRerunOptions(db, c.id, config),
    reruns,
    /** The conflict review (null: no two Tasks changed one file), each finding with its citations resolved. */
    conflictReview: await conflictReviewOf(db, c.id),
    verification: workflow
      ? { status: workflow.status, startedAt: workflow.startedAt, finishedAt: workflow.finishedAt }
      : null,
  };
}
