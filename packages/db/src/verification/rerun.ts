import {
  checkRerunId,
  checkRerunOptions,
  checkRerunRefusal,
  DomainError,
  type RerunInput,
  type RhumbatronConfig,
  type VerificationPlan,
} from "@rhumbatron/core";
import type { EnqueueDeps } from "@rhumbatron/runtime";
import { appendToOutbox } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { lockResourceRow } from "../events/owners.ts";
import { startWorkflowInstance } from "../queues/workflows.ts";
import { moveCandidates } from "../statuses/moves.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { changeEvent } from "../work-graph/shared.ts";
import { activeVerificationPolicy } from "./project-policy.ts";
import { evidenceOf } from "./workflow-state.ts";

type Reader = Db | TxContext["tx"];

/**
 * What core's rerun rule needs about one Candidate, read from the rows: the rerun budget and the
 * version in force come from the project's active policy.
 */
export async function rerunInput(db: Reader, candidateId: string, config: RhumbatronConfig): Promise<RerunInput> {
  const c = await db.candidate.findUniqueOrThrow({ where: { id: candidateId } });
  const [change, project, approval, reruns, evidence, policy] = await Promise.all([
    db.change.findUniqueOrThrow({ where: { id: c.changeId }, select: { status: true } }),
    db.project.findUniqueOrThrow({ where: { id: c.projectId }, select: { canonicalGeneration: true } }),
    db.approval.findUnique({ where: { candidateId }, select: { decision: true } }),
    db.checkRerun.groupBy({ by: ["checkId"], where: { candidateId }, _count: { _all: true } }),
    evidenceOf(db, candidateId),
    activeVerificationPolicy(db, c.projectId, config),
  ]);
  return {
    candidateStatus: c.status,
    changeStatus: change.status,
    stale: c.baseGeneration !== project.canonicalGeneration,
    approvalDecision: approval?.decision ?? null,
    plan: c.plan as VerificationPlan | null,
    evidence,
    rerunsUsed: Object.fromEntries(reruns.map((r) => [r.checkId, r._count._all])),
    limit: policy.rerunBudget ?? config.checks.rerunsPerCheck,
    activePolicy: { id: policy.id, version: policy.version },
  };
}

/** Each planned check of a Candidate with whether it can be rerun now (the Candidate page offers these). */
export async function candidateRerunOptions(db: Reader, candidateId: string, config: RhumbatronConfig) {
  return checkRerunOptions(await rerunInput(db, candidateId, config));
}

export interface CheckRerunRequested {
  rerunId: string;
  candidateId: string;
  checkId: string;
  /** 1 for the first rerun of this check. */
  rerun: number;
  /** Reruns of this check still allowed after this one. */
  remaining: number;
}

/**
 * Reruns one check of a rejected Candidate: in one transaction the rerun row, the Candidate back to
 * `verifying`, check.rerun_requested and the rerun's workflow instance (instance ID = rerun ID), so
 * the rerun happens exactly once. Anything core's rule refuses is a typed error and writes nothing.
 */
export async function requestCheckRerun(
  db: Db,
  q: { tenantId: string; candidateId: string; checkId: string; actorId: string },
  deps: EnqueueDeps,
): Promise<CheckRerunRequested> {
  return withTransaction(db, async (ctx) => {
    const found = await ctx.tx.candidate.findUnique({ where: { id: q.candidateId }, select: { changeId: true } });
    if (!found) throw new DomainError("NOT_FOUND", `candidate ${q.candidateId} not found`);
    const owner = await lockResourceRow(ctx, `change:${found.changeId}`);
    if (owner.tenantId !== q.tenantId) throw new DomainError("NOT_FOUND", `candidate ${q.candidateId} not found`);
    const input = await rerunInput(ctx.tx, q.candidateId, deps.config);
    if (input.plan && !input.plan.checks.some((c) => c.id === q.checkId)) {
      throw new DomainError(
        "INVALID_INPUT",
        `the Candidate's plan has no check ${q.checkId}; its checks are ${input.plan.checks.map((c) => c.id).join(", ")}`,
      );
    }
    const refusal = checkRerunRefusal(input, q.checkId);
    if (refusal) throw new DomainError("PRECONDITION_FAILED", refusal, { checkId: q.checkId });
    const n = (input.rerunsUsed[q.checkId] ?? 0) + 1;
    const rerunId = checkRerunId(q.candidateId, q.checkId, n);
    const now = deps.now();
    await ctx.tx.checkRerun.create({
      data: {
        id: rerunId,
        candidateId: q.candidateId,
        checkId: q.checkId,
        n,
        requestedBy: q.actorId,
        requestedAt: now,
      },
    });
    const moved = await moveCandidates(ctx.tx, { id: q.candidateId }, "verifying", { data: { rejectionReason: null } });
    if (moved !== 1) throw new DomainError("CONFLICT", `candidate ${q.candidateId} changed meanwhile; try again`);
    await appendToOutbox(
      ctx,
      [
        changeEvent(owner, "check.rerun_requested", {
          key: rerunId,
          actor: { kind: "user", id: q.actorId },
          now,
          payload: { candidateId: q.candidateId, checkId: q.checkId, rerun: n, actorId: q.actorId },
        }),
      ],
      deps,
    );
    await startWorkflowInstance(
      ctx,
      {
        kind: "rerun",
        instanceId: rerunId,
        input: { candidateId: q.candidateId, checkId: q.checkId, rerun: n },
        startedBy: q.actorId,
      },
      deps,
    );
    return { rerunId, candidateId: q.candidateId, checkId: q.checkId, rerun: n, remaining: input.limit - n };
  });
}

/** The rerun's end: its row records the Candidate's status after it. */
export async function finishCheckRerun(ctx: TxContext, rerunId: string, outcome: string, now: Date): Promise<void> {
  await ctx.tx.checkRerun.updateMany({ where: { id: rerunId, finishedAt: null }, data: { finishedAt: now, outcome } });
}
