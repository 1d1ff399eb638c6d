import {
  type ApprovalDecision,
  CHANGE_STATUS_SETS,
  checkPromotionPreconditions,
  commandIds,
  DomainError,
  decideApproval,
  decidePromotionCas,
  humanGateApplies,
  planPolicyMismatch,
  releaseId,
  type VerificationPlan,
  type VerificationPolicy,
} from "@rhumbatron/core";
import { appendToOutbox, type EnqueueDeps, enqueueCommand } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { changeEvent, projectEvent } from "../events/factory.ts";
import { type LockedProject, lockProjectRow, lockResourceRow } from "../events/owners.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { requestWorkflowStart } from "../queues/workflows.ts";
import { moveCandidates, moveChanges } from "../statuses/moves.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { attemptPickBlock } from "../work-graph/attempts.ts";
import { markCandidateStale } from "../work-graph/candidate-stale.ts";
import { readGate } from "./gate-reading.ts";
import { activeVerificationPolicy } from "./project-policy.ts";

/**
 * Approval and promotion of a Candidate (docs/verification.md; promotion's
 * steps are charted in docs/workflows.md). Both are deterministic rules over authoritative rows; no
 * model decides either.
 */
async function tenantCandidate(db: Db | TxContext["tx"], tenantId: string, candidateId: string) {
  const c = await db.candidate.findUnique({ where: { id: candidateId } });
  const project = c ? await db.project.findFirst({ where: { id: c.projectId, tenantId }, select: { id: true } }) : null;
  if (!c || !project) throw new DomainError("NOT_FOUND", `candidate ${candidateId} not found`);
  return c;
}

const approvalOf = (a: { decision: string; treeHash: string; decidedBy: string; note: string | null } | null) =>
  a
    ? ({ kind: a.decision as ApprovalDecision["kind"], treeHash: a.treeHash, by: a.decidedBy, note: a.note } as const)
    : null;

/**
 * A person's decision on a Candidate waiting for approval. It counts only for the tree the client
 * showed; the first decision is final; a rejection rejects the Candidate too.
 */
export async function decideCandidateApproval(
  db: Db,
  q: {
    tenantId: string;
    candidateId: string;
    userId: string;
    kind: "granted" | "rejected";
    treeHash: string;
    note?: string | null;
  },
  deps: EnqueueDeps,
): Promise<{ decision: ApprovalDecision; already: boolean }> {
  return withTransaction(db, async (ctx) => {
    const pre = await tenantCandidate(ctx.tx, q.tenantId, q.candidateId);
    const owner = await lockResourceRow(ctx, `change:${pre.changeId}`);
    const c = await ctx.tx.candidate.findUniqueOrThrow({ where: { id: q.candidateId }, include: { approval: true } });
    if (c.approval) {
      const outcome = decideApproval(approvalOf(c.approval), c.composedTree, { ...q, by: q.userId });
      if (!outcome.ok) throw new DomainError("CONFLICT", outcome.message, { reason: outcome.reason });
      // The same decision again: nothing is written, whatever the Candidate has become since.
      return { decision: outcome.decision, already: true };
    }
    if (!c.approvalRequired || c.status !== "verified") {
      throw new DomainError(
        "PRECONDITION_FAILED",
        c.approvalRequired
          ? `the Candidate is ${c.status}; only a verified Candidate can be approved or rejected`
          : "this Candidate does not need an approval",
      );
    }
    const outcome = decideApproval(null, c.composedTree, { ...q, by: q.userId });
    if (!outcome.ok) {
      throw new DomainError(outcome.reason === "tree_mismatch" ? "CONFLICT" : "INVALID_INPUT", outcome.message, {
        reason: outcome.reason,
      });
    }
    const d = outcome.decision;
    await ctx.tx.approval.create({
      data: {
        candidateId: c.id,
        decision: d.kind,
        treeHash: d.treeHash,
        decidedBy: d.by,
        note: d.note,
        decidedAt: deps.now(),
      },
    });
    const by = { key: c.id, actor: { kind: "user" as const, id: q.userId }, now: deps.now() };
    const events = [];
    if (d.kind === "granted") {
      events.push(
        changeEvent(owner, "approval.granted", {
          ...by,
          payload: { candidateId: c.id, treeHash: d.treeHash, approverId: q.userId },
        }),
      );
    } else {
      await moveCandidates(ctx.tx, { id: c.id }, "rejected", {
        data: { rejectionReason: `approval rejected: ${d.note ?? ""}` },
      });
      events.push(
        changeEvent(owner, "approval.rejected", {
          ...by,
          payload: { candidateId: c.id, treeHash: d.treeHash, approverId: q.userId, note: d.note ?? "" },
        }),
        changeEvent(owner, "candidate.rejected", {
          ...by,
          payload: { candidateId: c.id, reason: "approval rejected", gaps: [] },
        }),
      );
    }
    await appendToOutbox(ctx, events, deps);
    return { decision: d, already: false };
  });
}

export type PromoteResult =
  | { outcome: "promoted"; generation: number; commit: string; tree: string; releaseId: string | null }
  | { outcome: "alreadyPromoted"; generation: number }
  | { outcome: "stale"; canonicalGeneration: number }
  | { outcome: "blocked"; blocks: string[] };

export interface SourceProbe {
  /** Whether `commit` exists in the Candidate's fork (docs/protocol.md, Promotion P6). */
  commitInCandidateFork(candidateId: string, commit: string): Promise<boolean>;
}

/** The index build (which also fast-forwards canonical main) and the release of a promoted generation. */
async function afterPromotion(
  ctx: TxContext,
  p: { projectId: string; generation: number; candidateId: string; commit: string; tree: string; target: unknown },
  deps: EnqueueDeps,
): Promise<string | null> {
  await enqueueCommand(
    ctx,
    {
      commandId: commandIds.indexBuild(p.projectId, p.generation),
      commandType: "index.build",
      projectId: p.projectId,
      payload: { generation: p.generation },
    },
    deps,
  );
  if ((p.target as { kind?: string } | null)?.kind === "none") return null;
  const id = releaseId(p.projectId, p.generation);
  await ctx.tx.release.createMany({
    data: [
      {
        id,
        projectId: p.projectId,
        generation: p.generation,
        candidateId: p.candidateId,
        commit: p.commit,
        tree: p.tree,
        target: p.target as Prisma.InputJsonValue,
      },
    ],
    skipDuplicates: true,
  });
  await requestWorkflowStart(
    ctx,
    { kind: "release", key: id, projectId: p.projectId, input: { projectId: p.projectId } },
    deps,
  );
  return id;
}

/**
 * Promotion (docs/protocol.md, Promotion). Layer 1 checks P1-P6 from rows and the source store and
 * returns every block at once; layer 2 runs in one transaction holding the project root: the CAS on
 * the expected generation and base commit (P7) and the policy version (P5 again), then generation + 1 with
 * canonical.advanced and artifact.promoted. A retry after success is alreadyPromoted and sends the
 * source sync (index.build) and the release again, which repairs a sync that failed.
 */
export async function promoteCandidate(
  db: Db,
  q: PromoteRequest,
  deps: EnqueueDeps,
  probe: SourceProbe,
): Promise<PromoteResult> {
  const c = await tenantCandidate(db, q.tenantId, q.candidateId);
  const project = await db.project.findUniqueOrThrow({ where: { id: c.projectId } });
  // The project's active policy (docs/verification.md, The project's policy); layer 2 reads it
  // again under the lock.
  const policy = await activeVerificationPolicy(db, c.projectId, deps.config);
  const p: Promotion = { c, project, plan: c.plan as VerificationPlan | null, policy, q };
  if (c.status !== "promoted") {
    const refused = await layerOne(db, p, probe, deps);
    if (refused) return refused;
  }
  const result = await withTransaction(db, (ctx) => layerTwo(ctx, p, deps));
  if (result.outcome === "blocked") await recordBlocked(db, c, result.blocks, q, deps);
  return result;
}

type PromoteRequest = { tenantId: string; candidateId: string; actorId: string; actorKind?: "user" | "system" };
type PromotedCandidate = Awaited<ReturnType<typeof tenantCandidate>>;
interface Promotion {
  c: PromotedCandidate;
  project: { tenantId: string; canonicalGeneration: number; releaseTarget: unknown };
  plan: VerificationPlan | null;
  policy: VerificationPolicy;
  q: PromoteRequest;
}

/** Layer 1: every precondition that rows and the source store can answer, all blocks at once; null when none. */
async function layerOne(db: Db, p: Promotion, probe: SourceProbe, deps: EnqueueDeps): Promise<PromoteResult | null> {
  const { c, project, plan, policy } = p;
  const approval = await db.approval.findUnique({ where: { candidateId: c.id } });
  // A conflict review's supported blocking finding is a gap like a check's (docs/verification.md,
  // Conflict reviews).
  const gate = plan ? await readGate(db, c, plan) : null;
  const layer1 = checkPromotionPreconditions({
    candidateStatus: c.status,
    baseGeneration: c.baseGeneration,
    canonicalGeneration: project.canonicalGeneration,
    plan,
    gate,
    approvalRequired: plan ? humanGateApplies(plan, policy) : false,
    approval: approvalOf(approval),
    composedTree: c.composedTree,
    activePolicy: { id: policy.id, version: policy.version },
    composedCommitInFork: c.composedCommit ? await probe.commitInCandidateFork(c.id, c.composedCommit) : false,
  });
  const unpicked = await attemptPickBlock(db, c);
  if (layer1.ok && !unpicked) return null;
  if (!layer1.ok && layer1.stale) {
    await markCandidateStale(
      db,
      { ...c, tenantId: project.tenantId },
      { canonicalGeneration: project.canonicalGeneration, actor: "promotion" },
      deps,
    );
    return { outcome: "stale", canonicalGeneration: project.canonicalGeneration };
  }
  const blocks = [...(layer1.ok ? [] : layer1.blocks), ...(unpicked ? [unpicked] : [])];
  await recordBlocked(db, c, blocks, p.q, deps);
  return { outcome: "blocked", blocks };
}

/** Layer 2, under the project root's lock: the compare-and-swap decides, then canonical advances. */
async function layerTwo(ctx: TxContext, p: Promotion, deps: EnqueueDeps): Promise<PromoteResult> {
  const { c, plan, project } = p;
  const root = await lockProjectRow(ctx, c.projectId);
  // A policy edit holds the project row too: the version read here is the one in force at the CAS.
  const policy = await activeVerificationPolicy(ctx.tx, c.projectId, deps.config);
  const promotedBy = await ctx.tx.canonicalGeneration.findFirst({
    where: { projectId: c.projectId, candidateId: c.id },
    select: { generation: true },
  });
  const expected = await ctx.tx.canonicalGeneration.findUnique({
    where: { projectId_generation: { projectId: c.projectId, generation: c.baseGeneration } },
  });
  let cas = decidePromotionCas({
    canonicalGeneration: root.canonicalGeneration,
    promotedBy: promotedBy ? { candidateId: c.id, generation: promotedBy.generation } : null,
    candidateId: c.id,
    expectedGeneration: c.baseGeneration,
    planPolicyVersion: plan?.policyVersion ?? -1,
    activePolicyVersion: policy.version,
  });
  // P7 (docs/protocol.md, Promotion): canonical at the expected generation is the commit the Candidate was composed on.
  if (cas === "advance" && expected?.commit !== c.baseCommit) cas = "stale";
  if (cas === "already_promoted" && promotedBy) {
    const again = { generation: promotedBy.generation, commit: c.composedCommit ?? "", tree: c.composedTree ?? "" };
    await afterPromotion(
      ctx,
      { projectId: c.projectId, candidateId: c.id, ...again, target: project.releaseTarget },
      deps,
    );
    return { outcome: "alreadyPromoted", generation: promotedBy.generation };
  }
  if (cas === "stale") {
    await markCandidateStale(
      ctx,
      { ...c, tenantId: root.tenantId },
      { canonicalGeneration: root.canonicalGeneration, actor: "promotion" },
      deps,
    );
    return { outcome: "stale", canonicalGeneration: root.canonicalGeneration };
  }
  if (cas === "ahead") {
    return {
      outcome: "blocked",
      blocks: [
        `the Candidate is stacked on S${c.baseGeneration}, which is not canonical yet: it lands right after the Candidate below it`,
      ],
    };
  }
  if (cas === "policy_mismatch") {
    const why = plan ? planPolicyMismatch(plan, policy) : null;
    return { outcome: "blocked", blocks: [why ?? "no Verification Plan"] };
  }
  if (!c.composedCommit || !c.composedTree)
    return { outcome: "blocked", blocks: ["the Candidate has no composed commit"] };
  return advanceCanonical(ctx, p, root, { commit: c.composedCommit, tree: c.composedTree }, deps);
}

/** Generation + 1: the new canonical row, the Candidate and its Change promoted, both Events, sync and release. */
async function advanceCanonical(
  ctx: TxContext,
  p: Promotion,
  root: LockedProject,
  composed: { commit: string; tree: string },
  deps: EnqueueDeps,
): Promise<PromoteResult> {
  const { c, q } = p;
  const now = deps.now();
  const generation = root.canonicalGeneration + 1;
  await ctx.tx.canonicalGeneration.create({
    data: { projectId: c.projectId, generation, ...composed, candidateId: c.id, createdAt: now },
  });
  await ctx.tx.project.update({ where: { id: c.projectId }, data: { canonicalGeneration: generation } });
  const moved = await moveCandidates(ctx.tx, { id: c.id }, "promoted", { data: { promotedGeneration: generation } });
  if (moved !== 1) throw new DomainError("CONFLICT", `candidate ${c.id} changed while promoting; try again`);
  // The Change is done: its composed work is canonical now. A Change already final (cancelled, or
  // landed by another Candidate) lands nothing more: the whole transaction rolls back.
  if ((await moveChanges(ctx.tx, { id: c.changeId }, "promoted")) !== 1) {
    const change = await ctx.tx.change.findUniqueOrThrow({ where: { id: c.changeId }, select: { status: true } });
    if ((CHANGE_STATUS_SETS.final as readonly string[]).includes(change.status))
      throw new DomainError("CONFLICT", `change ${c.changeId} is ${change.status}; its Candidate cannot land`);
  }
  const by = {
    changeId: c.changeId,
    actor: { kind: q.actorKind ?? "user", id: q.actorId },
    canonicalGeneration: generation,
    now,
  } as const;
  const advanced = { candidateId: c.id, fromGeneration: root.canonicalGeneration, toGeneration: generation };
  await appendToOutbox(
    ctx,
    [
      projectEvent(root, "canonical.advanced", { ...by, payload: { ...advanced, treeHash: composed.tree } }),
      projectEvent(root, "artifact.promoted", {
        ...by,
        payload: { candidateId: c.id, generation, treeHash: composed.tree, commit: composed.commit },
      }),
    ],
    deps,
  );
  const target = p.project.releaseTarget;
  const rel = await afterPromotion(
    ctx,
    { projectId: c.projectId, generation, candidateId: c.id, ...composed, target },
    deps,
  );
  return { outcome: "promoted", generation, ...composed, releaseId: rel };
}

async function recordBlocked(
  db: Db,
  c: { id: string; changeId: string },
  blocks: string[],
  by: { actorId: string; actorKind?: "user" | "system" },
  deps: EnqueueDeps,
) {
  await withTransaction(db, async (ctx) => {
    const owner = await lockResourceRow(ctx, `change:${c.changeId}`);
    await appendToOutbox(
      ctx,
      [
        changeEvent(owner, "promotion.blocked", {
          key: `${c.id}\n${blocks.join("\n")}`,
          actor: { kind: by.actorKind ?? "user", id: by.actorId },
          now: deps.now(),
          payload: { candidateId: c.id, blocks },
        }),
      ],
      deps,
    );
  });
}
