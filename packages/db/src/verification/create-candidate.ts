import {
  candidateIdFromKey,
  compositionKey,
  DomainError,
  type HandlerResult,
  topologicalOrder,
} from "@rhumbatron/core";
import type { CommandHandler, EnqueueDeps } from "@rhumbatron/runtime";
import { appendToOutbox } from "@rhumbatron/runtime";
import { changeEvent } from "../events/factory.ts";
import { type LockedChange, lockResourceRow } from "../events/owners.ts";
import { requestWorkflowStart } from "../queues/workflows.ts";
import type { TxContext } from "../transaction.ts";
import { requestAttemptCandidate } from "../work-graph/attempts.ts";
import { leaveStackWait, lockStack, type StackPlace, stackPlace, waitOnStack } from "../work-graph/stack.ts";
import { holdRecomposition, type Recompose, recomposeReason, recompositionHeld } from "./recompose.ts";

export type { Recompose } from "./recompose.ts";

/**
 * candidate.create (integration queue): composes the Change's ChangeSets, in Work Graph order, on
 * the current canonical generation. The Candidate ID derives from the composition key, so a repeat
 * creates nothing. A new Candidate writes candidate.created and starts its verification workflow
 * (`verification.start`, instance ID = Candidate ID).
 *
 * A recomposition (canonical advanced under the Change's Candidate; docs/landing.md) composes the
 * same ChangeSets on the new generation, unless the Change has moved on (promoted, cancelled), or it
 * already had config.integration.recompositionsPerChangePerHour Candidates in the last hour: then it
 * is held, says why, and the same command comes back when the window allows.
 */

export type CreateCandidateResult =
  | { candidateId: string; created: boolean; held?: undefined; skipped?: undefined; waiting?: undefined }
  | { held: { reason: string; retryAt: Date }; candidateId?: undefined; created: false; skipped?: undefined }
  | { skipped: string; candidateId?: undefined; created: false; held?: undefined }
  /** It waits for a place in the project's speculative stack (work-graph/stack.ts); asked again when the stack moves. */
  | { waiting: string; candidateId?: undefined; created: false; held?: undefined; skipped?: undefined };

export async function createCandidate(
  ctx: TxContext,
  changeId: string,
  deps: EnqueueDeps,
  causedBy: string | null,
  recompose?: Recompose,
  /** One attempt's ChangeSet (work-graph/attempts.ts): it takes its Task's place in the composition. */
  attemptChangeSetId?: string,
): Promise<CreateCandidateResult> {
  // The project's stack lock first, then the Change's: the causal router takes them in that order too.
  const project = await ctx.tx.change.findUnique({ where: { id: changeId }, select: { projectId: true } });
  if (project) await lockStack(ctx, project.projectId);
  const owner = await lockResourceRow(ctx, `change:${changeId}`);
  const attempt = await attemptInComposition(ctx, changeId, recompose, attemptChangeSetId);
  if ("skipped" in attempt) return { skipped: attempt.skipped, created: false };
  let reason: string | null = null;
  // A Change that moved on composes nothing: a candidate.create delivered after a cancel (or after
  // the Change landed) must not make a Candidate that could land its work.
  const change = await ctx.tx.change.findUniqueOrThrow({ where: { id: changeId }, select: { status: true } });
  if (change.status === "cancelled" || change.status === "promoted" || (recompose && change.status !== "verifying")) {
    await leaveStackWait(ctx, changeId);
    return { skipped: `the change is ${change.status}`, created: false };
  }
  if (recompose) {
    if (await replacedAlready(ctx, changeId, recompose.from))
      return { skipped: `a newer Candidate replaced ${recompose.from} already`, created: false };
    const held = await recompositionHeld(ctx, changeId, deps);
    if (held) {
      await holdRecomposition(ctx, owner, changeId, recompose, held, deps, causedBy);
      return { held, created: false };
    }
    reason = await recomposeReason(ctx, owner.projectId, owner.canonicalGeneration);
  }
  const changeSetIds = await changeSetsInOrder(ctx, changeId, attempt.replace);
  const place = await placeOf(ctx, owner, attempt.alternative !== 1 || attemptChangeSetId !== undefined, deps);
  if (place.kind === "wait") {
    await waitOnStack(
      ctx,
      changeId,
      recompose ? { recomposeFrom: recompose.from, generation: recompose.generation } : {},
      deps.now(),
    );
    return { waiting: place.why, created: false };
  }
  if (place.kind === "stacked" && recompose)
    reason = `recomposed on top of ${place.below.changeId}'s Candidate (speculative stack)`;
  const row = { changeSetIds, alternative: attempt.alternative, recomposedFrom: recompose?.from ?? null, reason };
  const { candidateId, inserted } = await insertCandidate(ctx, owner, place, row, deps, causedBy);
  if (!inserted) return { candidateId, created: false };
  // The graph's first composition: the other attempts finished by now get their Candidates too.
  if (!recompose && !attemptChangeSetId && attempt.alternative === 1)
    await requestOtherAttemptCandidates(ctx, owner, changeId, deps);
  return { candidateId, created: true };
}

/** Where the Candidate goes (work-graph/stack.ts): an attempt other than the first is always on canonical. */
async function placeOf(ctx: TxContext, owner: LockedChange, attempt: boolean, deps: EnqueueDeps): Promise<StackPlace> {
  if (attempt) return { kind: "canonical" };
  return stackPlace(ctx, {
    projectId: owner.projectId,
    changeId: owner.id,
    canonicalGeneration: owner.canonicalGeneration,
    depth: deps.config.integration.speculativeDepth,
  });
}

/**
 * The Candidate's row (its ID from the composition key, so a repeat inserts nothing), the Change no
 * longer waiting on the stack, and for a new one candidate.created and its verification's start.
 */
async function insertCandidate(
  ctx: TxContext,
  owner: LockedChange,
  place: Exclude<StackPlace, { kind: "wait" }>,
  r: { changeSetIds: string[]; alternative: number; recomposedFrom: string | null; reason: string | null },
  deps: EnqueueDeps,
  causedBy: string | null,
): Promise<{ candidateId: string; inserted: boolean }> {
  const base = await baseOf(ctx, owner, place);
  // A stacked composition is keyed by the Candidate below too: once that one lands, the same
  // ChangeSets on canonical at the same generation and commit are a Candidate of their own.
  const keyBase = place.kind === "stacked" ? `${base.commit} on ${place.below.id}` : base.commit;
  const key = compositionKey(owner.projectId, base.generation, keyBase, r.changeSetIds);
  const candidateId = candidateIdFromKey(key);
  const stackedOn = place.kind === "stacked" ? place.below.id : null;
  const now = deps.now();
  const inserted = await ctx.tx.$executeRaw`
    INSERT INTO candidates (id, project_id, change_id, composition_key, base_generation, base_commit, changeset_ids,
      alternative, recomposed_from, recompose_reason, stacked_on, created_at, updated_at)
    VALUES (${candidateId}, ${owner.projectId}, ${owner.id}, ${key}, ${base.generation}, ${base.commit}, ${r.changeSetIds}::text[],
      ${r.alternative}, ${r.recomposedFrom}, ${r.reason}, ${stackedOn}, ${now}, ${now})
    ON CONFLICT (composition_key) DO NOTHING`;
  await leaveStackWait(ctx, owner.id);
  if (inserted === 0) return { candidateId, inserted: false };
  const event = changeEvent(owner, "candidate.created", {
    key: candidateId,
    actor: { kind: "system", id: "composer" },
    causedBy,
    now,
    payload: {
      candidateId,
      baseGeneration: base.generation,
      compositionKey: key,
      ...(r.recomposedFrom ? { recomposedFrom: r.recomposedFrom } : {}),
      ...(r.reason ? { reason: r.reason } : {}),
      ...(stackedOn ? { stackedOn } : {}),
    },
  });
  await appendToOutbox(ctx, [event], deps);
  await requestWorkflowStart(
    ctx,
    { kind: "verification", key: candidateId, projectId: owner.projectId, changeId: owner.id },
    deps,
  );
  return { candidateId, inserted: true };
}

/** The generation and commit a Candidate is composed on: canonical's, or the Candidate's below it. */
async function baseOf(
  ctx: TxContext,
  owner: LockedChange,
  place: Exclude<StackPlace, { kind: "wait" }>,
): Promise<{ generation: number; commit: string }> {
  if (place.kind === "stacked")
    return { generation: place.below.baseGeneration + 1, commit: place.below.composedCommit };
  const base = await ctx.tx.canonicalGeneration.findUnique({
    where: { projectId_generation: { projectId: owner.projectId, generation: owner.canonicalGeneration } },
  });
  if (!base)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `project ${owner.projectId} has no source at S${owner.canonicalGeneration} yet`,
    );
  return base;
}

/** A Candidate of the Change newer than the stale one exists and is in play: it was recomposed already. */
async function replacedAlready(ctx: TxContext, changeId: string, staleId: string): Promise<boolean> {
  const stale = await ctx.tx.candidate.findUnique({ where: { id: staleId }, select: { createdAt: true } });
  if (!stale) return false;
  const newer = await ctx.tx.candidate.findFirst({
    where: { changeId, createdAt: { gt: stale.createdAt }, status: { in: ["created", "verifying", "verified"] } },
    select: { id: true },
  });
  return newer !== null;
}

/**
 * The ChangeSets to compose, in Work Graph order: each Task's newest ChangeSet of attempt 1, or the
 * attempt's own for the Task it replaces. Every Task must be completed.
 */
async function changeSetsInOrder(
  ctx: TxContext,
  changeId: string,
  replace: { id: string; taskId: string } | null,
): Promise<string[]> {
  const tasks = await ctx.tx.task.findMany({ where: { changeId }, orderBy: { position: "asc" } });
  if (tasks.some((t) => t.state !== "completed"))
    throw new DomainError("PRECONDITION_FAILED", `change ${changeId} has unfinished Tasks`);
  const order = topologicalOrder(tasks.map((t) => ({ key: t.key, dependsOn: t.dependencies })));
  const sets = await ctx.tx.changeSet.findMany({ where: { changeId }, orderBy: { createdAt: "desc" } });
  const byTask = new Map<string, string>();
  for (const cs of sets) if (cs.alternative === 1 && !byTask.has(cs.taskId)) byTask.set(cs.taskId, cs.id);
  if (replace) byTask.set(replace.taskId, replace.id);
  return order.flatMap((k) => {
    const id = byTask.get(tasks.find((t) => t.key === k)?.id ?? "");
    return id ? [id] : [];
  });
}

/** Asks for a Candidate of each other attempt's newest ChangeSet. */
async function requestOtherAttemptCandidates(
  ctx: TxContext,
  owner: LockedChange,
  changeId: string,
  deps: EnqueueDeps,
): Promise<void> {
  const others = await ctx.tx.changeSet.findMany({
    where: { changeId, alternative: { gt: 1 } },
    orderBy: { createdAt: "desc" },
    select: { id: true, alternative: true },
  });
  const newest = new Map<number, string>();
  for (const cs of others) if (!newest.has(cs.alternative)) newest.set(cs.alternative, cs.id);
  for (const id of newest.values()) await requestAttemptCandidate(ctx, owner, id, deps);
}

/**
 * Which attempt a composition is (work-graph/attempts.ts) and the ChangeSet that stands for its
 * Task: the one asked for; a recomposed Candidate's own; else the picked attempt's; else attempt 1
 * (the Task's own ChangeSet, as for any Task). An attempt other than the picked one is not composed.
 */
async function attemptInComposition(
  ctx: TxContext,
  changeId: string,
  recompose: Recompose | undefined,
  attemptChangeSetId: string | undefined,
): Promise<{ alternative: number; replace: { id: string; taskId: string } | null } | { skipped: string }> {
  const change = await ctx.tx.change.findUniqueOrThrow({
    where: { id: changeId },
    select: { status: true, pickedAttempt: true },
  });
  const otherThanPicked = (n: number) => change.pickedAttempt !== null && change.pickedAttempt !== n;
  if (attemptChangeSetId) {
    const cs = await ctx.tx.changeSet.findUnique({ where: { id: attemptChangeSetId } });
    if (!cs || cs.changeId !== changeId) return { skipped: `no ChangeSet ${attemptChangeSetId} in this change` };
    if (change.status !== "verifying") return { skipped: `the change is ${change.status}` };
    if (otherThanPicked(cs.alternative)) return { skipped: `attempt ${change.pickedAttempt} was picked` };
    return { alternative: cs.alternative, replace: { id: cs.id, taskId: cs.taskId } };
  }
  if (recompose) {
    const from = await ctx.tx.candidate.findUnique({
      where: { id: recompose.from },
      select: { alternative: true, changeSetIds: true },
    });
    if (!from || from.alternative === 1) return { alternative: 1, replace: null };
    if (otherThanPicked(from.alternative)) return { skipped: `attempt ${change.pickedAttempt} was picked` };
    const cs = await ctx.tx.changeSet.findFirst({
      where: { id: { in: from.changeSetIds }, alternative: from.alternative },
      select: { id: true, taskId: true },
    });
    return { alternative: from.alternative, replace: cs };
  }
  if (change.pickedAttempt === null || change.pickedAttempt === 1) return { alternative: 1, replace: null };
  const cs = await ctx.tx.changeSet.findFirst({
    where: { changeId, alternative: change.pickedAttempt },
    orderBy: { createdAt: "desc" },
    select: { id: true, taskId: true },
  });
  return { alternative: change.pickedAttempt, replace: cs };
}

export function candidateCreateHandler(deps: EnqueueDeps): CommandHandler {
  return {
    commandTypes: ["candidate.create"],
    async handle(ctx): Promise<HandlerResult> {
      if (!ctx.command.changeId) throw new DomainError("INVALID_INPUT", "candidate.create needs a changeId");
      const p = ctx.command.payload as { recomposeFrom?: unknown; generation?: unknown; attemptChangeSetId?: unknown };
      const recompose =
        typeof p.recomposeFrom === "string" && typeof p.generation === "number"
          ? { from: p.recomposeFrom, generation: p.generation }
          : undefined;
      const attempt = typeof p.attemptChangeSetId === "string" ? p.attemptChangeSetId : undefined;
      await createCandidate(ctx, ctx.command.changeId, deps, ctx.command.commandId, recompose, attempt);
      return "done";
    },
  };
}
