import { CANDIDATE_STATUS_SETS, candidateStatusIn, commandIds, type VerificationPlan } from "@rhumbatron/core";
import { type EnqueueDeps, enqueueCommand } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { Prisma } from "../generated/prisma/client.ts";
import type { TxContext } from "../transaction.ts";

/**
 * Speculative stacks (docs/landing.md). While the head of a project's landing queue verifies, the
 * next Change's Candidate is composed on the head's composed commit instead of on canonical, and
 * the next on that one, up to config.integration.speculativeDepth Candidates, all verifying side by
 * side. A stacked Candidate's base generation is the one below's plus one and its base commit the
 * one below's composed commit, so promotion's compare-and-swap lets it land only once exactly that
 * commit is canonical: nothing lands that was not verified on the tree that lands.
 *
 * Who is in the stack: the live Candidates of Changes that land when ready, starting from one on
 * the current generation and following `stacked_on` upwards. A Change whose Candidate cannot be
 * placed now (the top is still being composed, or the stack is full) waits: `changes.stack_wait`
 * keeps its candidate.create request, and the causal router asks again (askWaitingOnStack) when the
 * stack moves. Both take the project's stack lock, and before any other lock (the Change's row, the
 * outbox's head), so no request is left waiting unseen and the two never wait on each other.
 */

export interface StackMember {
  id: string;
  changeId: string;
  status: string;
  baseGeneration: number;
  composedCommit: string | null;
  plan: Prisma.JsonValue;
}

/** Serialises placing Candidates on a project's stack with asking the waiting ones again. */
export async function lockStack(ctx: TxContext, projectId: string): Promise<void> {
  await ctx.tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`stack:${projectId}`}))`;
}

/** The project's stack, bottom first (empty when no Candidate of the landing queue is in flight). */
export async function stackOf(
  tx: TxContext["tx"] | Db,
  projectId: string,
  canonicalGeneration: number,
): Promise<StackMember[]> {
  const landing = await tx.change.findMany({
    where: { projectId, landWhenReady: true, status: "verifying" },
    select: { id: true },
  });
  if (landing.length === 0) return [];
  const live = await tx.candidate.findMany({
    where: {
      projectId,
      status: { in: [...CANDIDATE_STATUS_SETS.live] },
      changeId: { in: landing.map((c) => c.id) },
    },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: {
      id: true,
      changeId: true,
      status: true,
      baseGeneration: true,
      composedCommit: true,
      plan: true,
      stackedOn: true,
    },
  });
  const chainFrom = (root: (typeof live)[number]) => {
    const chain: StackMember[] = [root];
    for (let top = root; ; ) {
      const next = live.find((c) => c.stackedOn === top.id);
      if (!next) return chain;
      chain.push(next);
      top = next;
    }
  };
  // Several Candidates may sit on canonical itself (composed before the stack formed): the longest
  // chain is the stack, the oldest root among equals.
  let best: StackMember[] = [];
  for (const root of live.filter((c) => c.baseGeneration === canonicalGeneration)) {
    const chain = chainFrom(root);
    if (chain.length > best.length) best = chain;
  }
  return best;
}

export type StackPlace =
  | { kind: "canonical" }
  | { kind: "stacked"; below: StackMember & { composedCommit: string } }
  | { kind: "wait"; why: string };

/**
 * Where a Change's next Candidate goes: on canonical when the stack is empty (or the Change does
 * not land by itself), on the stack's top when it is composed and the stack has room, and
 * otherwise it waits. A top that edits the gate (.rhumbatron/) is never built on: the Candidates
 * above it would be checked under a gate that is not the one they land under.
 */
export async function stackPlace(
  ctx: TxContext,
  q: { projectId: string; changeId: string; canonicalGeneration: number; depth: number },
): Promise<StackPlace> {
  const change = await ctx.tx.change.findUniqueOrThrow({
    where: { id: q.changeId },
    select: { landWhenReady: true, pickedAttempt: true, stackWait: true, landingPriority: true },
  });
  if (!change.landWhenReady || change.pickedAttempt !== null) return { kind: "canonical" };
  // It conflicted or failed on top of a Candidate that had not passed: placed again once that one
  // has left the stack (landed, or failed itself).
  const after = canonicalAfter(change.stackWait);
  if (after && (await isLive(ctx.tx, after))) {
    return {
      kind: "wait",
      why: `it conflicted or failed on top of ${after}: composed again once that one has landed or failed`,
    };
  }
  const stack = await stackOf(ctx.tx, q.projectId, q.canonicalGeneration);
  const own = stack.findIndex((m) => m.changeId === q.changeId);
  const below = own === -1 ? stack : stack.slice(0, own);
  const top = below.at(-1);
  if (!top) return { kind: "canonical" };
  // An admin put it ahead of a Change in the stack: it is not built on that one, but on canonical,
  // so it can land first (docs/landing.md, Queue controls).
  const behind = await ctx.tx.change.count({
    where: { id: { in: below.map((m) => m.changeId) }, landingPriority: { lt: change.landingPriority } },
  });
  if (behind > 0) return { kind: "canonical" };
  if (below.length >= q.depth) {
    return { kind: "wait", why: `the speculative stack is full (${below.length} of ${q.depth})` };
  }
  if (!top.composedCommit) {
    return { kind: "wait", why: `the Candidate below it (${top.id}) is being composed` };
  }
  if ((top.plan as VerificationPlan | null)?.editsTheGate?.length) return { kind: "canonical" };
  return { kind: "stacked", below: { ...top, composedCommit: top.composedCommit } };
}

const canonicalAfter = (request: Prisma.JsonValue): string | null => {
  const v = (request as { canonicalAfter?: unknown } | null)?.canonicalAfter;
  return typeof v === "string" ? v : null;
};

async function isLive(tx: TxContext["tx"], candidateId: string): Promise<boolean> {
  const c = await tx.candidate.findUnique({ where: { id: candidateId }, select: { status: true } });
  return c !== null && candidateStatusIn(c.status, "live");
}

/** Keeps a Change's candidate.create request until the stack has a place for it. */
export async function waitOnStack(
  ctx: TxContext,
  changeId: string,
  request: Record<string, unknown>,
  now: Date,
): Promise<void> {
  // Its place among the waiting is kept from the first time it waited.
  await ctx.tx.$executeRaw`
    UPDATE changes SET stack_wait = ${JSON.stringify(request)}::jsonb, stack_wait_since = COALESCE(stack_wait_since, ${now})
    WHERE id = ${changeId}`;
}

/** The Change has its Candidate: it no longer waits. */
export async function leaveStackWait(ctx: TxContext, changeId: string): Promise<void> {
  await ctx.tx.change.updateMany({
    where: { id: changeId, stackWaitSince: { not: null } },
    data: { stackWait: Prisma.DbNull, stackWaitSince: null },
  });
}

/**
 * The stack moved (a Candidate composed, landed, failed, left): the first Change waiting for a
 * place, by priority then by how long it has waited, is asked again. Only one: the Candidate it
 * gets is not composed yet, so the next could not be placed before that one's candidate.composed.
 */
export async function askWaitingOnStack(
  ctx: TxContext,
  projectId: string,
  causeEventId: string,
  deps: EnqueueDeps,
): Promise<string | null> {
  await lockStack(ctx, projectId);
  const all = await ctx.tx.change.findMany({
    where: { projectId, stackWaitSince: { not: null }, status: "verifying", landWhenReady: true },
    orderBy: [{ landingPriority: "desc" }, { stackWaitSince: "asc" }, { id: "asc" }],
    select: { id: true, stackWait: true },
  });
  // One that waits for a Candidate still in the stack to land is not asked yet.
  let waiting: (typeof all)[number] | undefined;
  for (const w of all) {
    const after = canonicalAfter(w.stackWait);
    if (!after || !(await isLive(ctx.tx, after))) {
      waiting = w;
      break;
    }
  }
  if (!waiting) return null;
  await enqueueCommand(
    ctx,
    {
      commandType: "candidate.create",
      commandId: commandIds.stackPlace(waiting.id, causeEventId),
      projectId,
      changeId: waiting.id,
      taskId: null,
      payload: { ...((waiting.stackWait as Record<string, unknown> | null) ?? {}), causeEventId },
    },
    deps,
  );
  return waiting.id;
}

/**
 * Whether a Candidate's base still stands: canonical itself at its generation, or, for a stacked
 * one ahead of canonical, a Candidate below it that is still in play. False: it is stale.
 */
export async function baseStands(
  db: Db | TxContext["tx"],
  c: { projectId: string; baseGeneration: number; baseCommit: string; stackedOn: string | null },
  canonicalGeneration: number,
): Promise<boolean> {
  if (c.baseGeneration < canonicalGeneration) return false;
  if (c.baseGeneration === canonicalGeneration) {
    const gen = await db.canonicalGeneration.findUnique({
      where: { projectId_generation: { projectId: c.projectId, generation: c.baseGeneration } },
      select: { commit: true },
    });
    return gen?.commit === c.baseCommit;
  }
  if (!c.stackedOn) return false;
  const below = await db.candidate.findUnique({ where: { id: c.stackedOn }, select: { status: true } });
  return below !== null && candidateStatusIn(below.status, "live");
}

/** Whether a Candidate's fork (cand-<id>) is still kept: the sweep removes it only once its commit is in canonical. */
export async function candidateForkKept(db: Db, candidateId: string): Promise<boolean> {
  const row = await db.candidate.findUnique({ where: { id: candidateId }, select: { forkDeletedAt: true } });
  return row !== null && row.forkDeletedAt === null;
}

/**
 * A stacked Candidate failed its checks: may the failure be the Candidate below's? Null when the one
 * below passed (verified or landed), so the failure is this one's; otherwise the generation canonical
 * is at, for the stale outcome that waits for the one below.
 */
export async function failureMayBeBelow(
  db: Db,
  c: { projectId: string; stackedOn: string | null },
): Promise<number | null> {
  if (!c.stackedOn) return null;
  const below = await db.candidate.findUnique({ where: { id: c.stackedOn }, select: { status: true } });
  if (below?.status === "verified" || below?.status === "promoted") return null;
  const project = await db.project.findUniqueOrThrow({
    where: { id: c.projectId },
    select: { canonicalGeneration: true },
  });
  return project.canonicalGeneration;
}
