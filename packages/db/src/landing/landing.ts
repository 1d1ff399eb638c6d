import {
  CHANGE_STATUS_SETS,
  commandIds,
  DomainError,
  LANDING_QUEUE_STATES,
  type LandingInput,
  type LandingQueueState,
  type LandingState,
  landingState,
} from "@rhumbatron/core";
import { appendToOutbox, type EnqueueDeps, enqueueCommand } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { projectEvent } from "../events/factory.ts";
import { type LockedChange, lockProjectRow, lockResourceRow } from "../events/owners.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { type PromoteResult, promoteCandidate, type SourceProbe } from "../verification/promote.ts";
import { attemptedTask } from "../work-graph/attempts.ts";
import { markCandidateStale } from "../work-graph/candidate-stale.ts";
import { changeEvent } from "../work-graph/shared.ts";

/**
 * The landing queue (docs/landing.md). A Change with "land when ready" is promoted by the
 * `candidate.land` command (integration queue, one message at a time, oldest first) once
 * core's landingState says it is ready; the compare-and-swap of promotion stays the final guard.
 */
type Reader = Db | TxContext["tx"];

/** What landingState needs about one Change, read from the rows. */
export async function landingInput(
  db: Reader,
  changeId: string,
): Promise<LandingInput & { candidateId: string | null; stackedOnCandidate: string | null }> {
  const change = await db.change.findUniqueOrThrow({
    where: { id: changeId },
    select: {
      status: true,
      pickedAttempt: true,
      stackWaitSince: true,
      project: { select: { landingQueue: true, landingQueueSince: true, canonicalGeneration: true } },
    },
  });
  // A Change whose Task has attempts lands its picked attempt's Candidate, and nothing before a pick.
  const attempted = await attemptedTask({ tx: db as Db }, changeId);
  const tasks = await db.task.findMany({
    where: { changeId },
    orderBy: { position: "asc" },
    select: { key: true, state: true },
  });
  const c = await db.candidate.findFirst({
    where: { changeId, ...(attempted && change.pickedAttempt !== null ? { alternative: change.pickedAttempt } : {}) },
    orderBy: { createdAt: "desc" },
  });
  const approval = c ? await db.approval.findUnique({ where: { candidateId: c.id } }) : null;
  const held =
    c?.status === "stale"
      ? await db.outboxRow.findFirst({
          where: { eventType: "candidate.recomposition_held", envelope: { path: ["changeId"], equals: changeId } },
          orderBy: { id: "desc" },
          select: { envelope: true },
        })
      : null;
  return {
    candidateId: c?.id ?? null,
    changeStatus: change.status,
    tasks,
    candidate: c
      ? {
          id: c.id,
          status: c.status,
          approvalRequired: c.approvalRequired,
          composedTree: c.composedTree,
          rejectionReason: c.rejectionReason,
        }
      : null,
    approval: approval ? { decision: approval.decision, treeHash: approval.treeHash } : null,
    recompositionHeld: held ? ((held.envelope as { payload?: { reason?: string } }).payload?.reason ?? null) : null,
    queue: { state: queueState(change.project.landingQueue), since: change.project.landingQueueSince },
    candidateCreatedAt: c?.createdAt ?? null,
    attemptPickPending: attempted !== null && change.pickedAttempt === null && change.status === "verifying",
    stackedOn:
      c?.stackedOn && c.baseGeneration > change.project.canonicalGeneration ? await belowOf(db, c.stackedOn) : null,
    stackWaiting: change.stackWaitSince !== null && change.status === "verifying",
    stackedOnCandidate: c?.stackedOn ?? null,
  };
}

/** The Change of the Candidate below one in a speculative stack, as the queue names it. */
async function belowOf(db: Reader, candidateId: string): Promise<{ changeId: string; title: string } | null> {
  const below = await db.candidate.findUnique({ where: { id: candidateId }, select: { changeId: true } });
  if (!below) return null;
  const change = await db.change.findUnique({ where: { id: below.changeId }, select: { id: true, title: true } });
  return change ? { changeId: change.id, title: change.title } : null;
}

const queueState = (s: string): LandingQueueState =>
  (LANDING_QUEUE_STATES as readonly string[]).includes(s) ? (s as LandingQueueState) : "running";

/** A project's landing queue as an admin set it, and since when (null: never paused). */
export async function landingQueueStatus(
  db: Db,
  q: { tenantId: string; projectId: string },
): Promise<{ state: LandingQueueState; since: Date | null }> {
  const p = await db.project.findFirst({
    where: { id: q.projectId, tenantId: q.tenantId },
    select: { landingQueue: true, landingQueueSince: true },
  });
  if (!p) throw new DomainError("NOT_FOUND", `project ${q.projectId} not found`);
  return { state: queueState(p.landingQueue), since: p.landingQueueSince };
}

/**
 * An admin pauses, drains or resumes a project's landing queue: one Event (landing.queue_changed)
 * in the same transaction. Resuming, or draining, sends the land command for every Change that may
 * land then, in queue order; pausing or draining stops nothing already promoting (the compare-and-swap of
 * promotion is unaffected) and only keeps the next ones from landing. The same state again
 * changes nothing and writes nothing.
 */
export async function setLandingQueue(
  db: Db,
  q: { tenantId: string; projectId: string; state: LandingQueueState; actorId: string },
  deps: EnqueueDeps,
): Promise<{ state: LandingQueueState; previous: LandingQueueState; changed: boolean; landing: string[] }> {
  return withTransaction(db, async (ctx) => {
    const root = await lockProjectRow(ctx, q.projectId).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === "NOT_FOUND") return null;
      throw err;
    });
    if (!root || root.tenantId !== q.tenantId) throw new DomainError("NOT_FOUND", `project ${q.projectId} not found`);
    const project = await ctx.tx.project.findUniqueOrThrow({ where: { id: q.projectId } });
    const previous = queueState(project.landingQueue);
    if (previous === q.state) return { state: q.state, previous, changed: false, landing: [] };
    const now = deps.now();
    await ctx.tx.project.update({
      where: { id: q.projectId },
      data: { landingQueue: q.state, landingQueueSince: q.state === "running" ? null : now },
    });
    await appendToOutbox(
      ctx,
      [
        projectEvent(root, "landing.queue_changed", {
          actor: { kind: "user", id: q.actorId },
          payload: { state: q.state, previous, actorId: q.actorId },
          now,
        }),
      ],
      deps,
    );
    const landing: string[] = [];
    // Resumed, or draining after a pause: what may land now is sent on (a drain lets through what
    // was composed before it began).
    if (q.state !== "paused") {
      const waiting = await ctx.tx.change.findMany({
        where: { projectId: q.projectId, landWhenReady: true, status: { notIn: [...CHANGE_STATUS_SETS.final] } },
        orderBy: [{ landingPriority: "desc" }, { landingSince: "asc" }, { id: "asc" }],
        select: { id: true },
      });
      for (const w of waiting) {
        const input = await landingInput(ctx.tx, w.id);
        if (!landingState(input).ready || !input.candidateId) continue;
        landing.push(w.id);
        await enqueueCommand(
          ctx,
          {
            commandType: "candidate.land",
            commandId: commandIds.land(input.candidateId, `${q.state}${now.getTime()}`),
            projectId: q.projectId,
            changeId: w.id,
            taskId: null,
            payload: { candidateId: input.candidateId },
          },
          deps,
        );
      }
    }
    return { state: q.state, previous, changed: true, landing };
  });
}

/** Turns "land when ready" on or off; turned on for a Change that is ready already, it lands at once. */
export async function setLandWhenReady(
  db: Db,
  q: { tenantId: string; changeId: string; on: boolean; actorId: string },
  deps: EnqueueDeps,
): Promise<{ landWhenReady: boolean; changed: boolean; state: LandingState }> {
  return withTransaction(db, async (ctx) => {
    const owner = await lockResourceRow(ctx, `change:${q.changeId}`).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === "NOT_FOUND") return null;
      throw err;
    });
    if (!owner || owner.tenantId !== q.tenantId) throw new DomainError("NOT_FOUND", `change ${q.changeId} not found`);
    const change = await ctx.tx.change.findUniqueOrThrow({ where: { id: q.changeId } });
    const input = await landingInput(ctx.tx, q.changeId);
    const state = landingState(input);
    if (q.on && (state.waitingFor === "landed" || state.waitingFor === "cancelled")) {
      throw new DomainError("PRECONDITION_FAILED", `the change is ${change.status}: there is nothing left to land`);
    }
    if (change.landWhenReady === q.on) return { landWhenReady: q.on, changed: false, state };
    const now = deps.now();
    await ctx.tx.change.update({
      where: { id: q.changeId },
      data: { landWhenReady: q.on, landingSince: q.on ? now : null },
    });
    await appendToOutbox(
      ctx,
      [
        changeEvent(owner, "change.landing_changed", {
          key: `${q.on}:${now.toISOString()}`,
          actor: { kind: "user", id: q.actorId },
          payload: { landWhenReady: q.on, actorId: q.actorId },
          now,
        }),
      ],
      deps,
    );
    if (q.on && state.ready && input.candidateId) {
      await enqueueCommand(
        ctx,
        {
          commandType: "candidate.land",
          commandId: commandIds.land(input.candidateId, `on${now.getTime()}`),
          projectId: owner.projectId,
          changeId: q.changeId,
          taskId: null,
          payload: { candidateId: input.candidateId },
        },
        deps,
      );
    }
    return { landWhenReady: q.on, changed: true, state };
  });
}

/** A ready Change of the same project with a higher landing priority, if any. */
async function readyAhead(db: Db, changeId: string): Promise<string | null> {
  const me = await db.change.findUniqueOrThrow({
    where: { id: changeId },
    select: { projectId: true, landingPriority: true },
  });
  const higher = await db.change.findMany({
    where: {
      projectId: me.projectId,
      landWhenReady: true,
      landingPriority: { gt: me.landingPriority },
      status: { notIn: [...CHANGE_STATUS_SETS.final] },
    },
    orderBy: { landingPriority: "desc" },
    select: { id: true },
  });
  for (const h of higher) if (landingState(await landingInput(db, h.id)).ready) return h.id;
  return null;
}

/**
 * An admin gives a Change a priority in its project's landing queue (higher lands first among the
 * ready ones, and is listed first), or moves it to the front (one above the highest now). One Event,
 * landing.priority_changed, in the same transaction; the same priority again writes nothing.
 */
export async function setLandingPriority(
  db: Db,
  q: { tenantId: string; changeId: string; priority: number | "front"; actorId: string },
  deps: EnqueueDeps,
): Promise<{ priority: number; previous: number; changed: boolean }> {
  return withTransaction(db, async (ctx) => {
    const owner = await lockResourceRow(ctx, `change:${q.changeId}`).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === "NOT_FOUND") return null;
      throw err;
    });
    if (!owner || owner.tenantId !== q.tenantId) throw new DomainError("NOT_FOUND", `change ${q.changeId} not found`);
    const change = await ctx.tx.change.findUniqueOrThrow({ where: { id: q.changeId } });
    if (!change.landWhenReady || (CHANGE_STATUS_SETS.final as readonly string[]).includes(change.status))
      throw new DomainError(
        "PRECONDITION_FAILED",
        `the change is not waiting in the landing queue (${change.status}${change.landWhenReady ? "" : ", land when ready is off"})`,
      );
    const previous = change.landingPriority;
    let priority: number;
    if (q.priority === "front") {
      const top = await ctx.tx.change.aggregate({
        where: { projectId: owner.projectId, landWhenReady: true, id: { not: q.changeId } },
        _max: { landingPriority: true },
      });
      priority = Math.max(previous, (top._max.landingPriority ?? 0) + 1);
    } else priority = q.priority;
    if (priority === previous) return { priority, previous, changed: false };
    const now = deps.now();
    await ctx.tx.change.update({ where: { id: q.changeId }, data: { landingPriority: priority } });
    // Stacked on Changes it now goes ahead of: composed again, on canonical, so it can land first.
    if (priority > previous) await unstack(ctx, owner, deps);
    await appendToOutbox(
      ctx,
      [
        changeEvent(owner, "landing.priority_changed", {
          key: `${priority}:${now.toISOString()}`,
          actor: { kind: "user", id: q.actorId },
          payload: { priority, previous, front: q.priority === "front", actorId: q.actorId },
          now,
        }),
      ],
      deps,
    );
    return { priority, previous, changed: true };
  });
}

/** The Change's live Candidate, if it sits on another in a speculative stack, goes stale (and is recomposed). */
async function unstack(ctx: TxContext, owner: LockedChange, deps: EnqueueDeps): Promise<void> {
  const stacked = await ctx.tx.candidate.findFirst({
    where: { changeId: owner.id, stackedOn: { not: null }, status: { in: ["created", "verifying", "verified"] } },
    select: { id: true },
  });
  if (!stacked) return;
  await markCandidateStale(
    ctx,
    { id: stacked.id, changeId: owner.id, projectId: owner.projectId, tenantId: owner.tenantId },
    { canonicalGeneration: owner.canonicalGeneration, actor: "landing-queue" },
    deps,
  );
}

export type LandOutcome = { landed: false; why: string } | { landed: true; result: PromoteResult };

/**
 * The `candidate.land` handler's work: promote the Candidate if it is still its Change's newest,
 * the Change still lands when ready, and landingState says it is ready. Anything else is a no-op
 * (a later Event sends the command again when something moves).
 */
export async function landCandidate(
  db: Db,
  q: { changeId: string; candidateId: string },
  deps: EnqueueDeps,
  probe: SourceProbe,
): Promise<LandOutcome> {
  const change = await db.change.findUnique({
    where: { id: q.changeId },
    select: { landWhenReady: true, project: { select: { tenantId: true } } },
  });
  if (!change) return { landed: false, why: "no such change" };
  if (!change.landWhenReady) return { landed: false, why: "land when ready is off" };
  const input = await landingInput(db, q.changeId);
  if (input.candidateId !== q.candidateId) return { landed: false, why: "a newer Candidate replaced it" };
  const state = landingState(input);
  if (!state.ready) return { landed: false, why: state.detail };
  // A Change ahead of it in the queue that is ready too lands first (its own command is on the
  // queue); this one then follows, recomposed on the generation that one made.
  const ahead = await readyAhead(db, q.changeId);
  if (ahead) return { landed: false, why: `${ahead} is ahead of it in the landing queue and ready: it lands first` };
  const result = await promoteCandidate(
    db,
    { tenantId: change.project.tenantId, candidateId: q.candidateId, actorId: "landing-queue", actorKind: "system" },
    deps,
    probe,
  );
  return { landed: true, result };
}
