import {
  candidateStatusesInto,
  DomainError,
  type EventEnvelope,
  isGraphComplete,
  statusesInto,
  TASK_TRANSITIONS,
} from "@rhumbatron/core";
import { appendToOutbox } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { claimReleased } from "../events/claims.ts";
import { type LockedChange, lockResourceRow } from "../events/owners.ts";
import { moveCandidates, moveChanges, moveOne, moveRuns, moveTasks } from "../statuses/moves.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { loadTasks } from "./dispatch.ts";
import { fenceRun, UNCLAIMED_EPOCH } from "./run-fence.ts";
import { changeEvent, type WorkGraphDeps } from "./shared.ts";

/**
 * An Agent finished its Task: the run ends, and task.completed (or task.failed) and claim.released
 * go through the shard outbox, in one transaction, while the runner still holds the run (`epoch`,
 * ./run-fence.ts; a runner whose run was taken over records nothing). When every Task of the Change
 * has completed, the shard also writes verification.started with reason work_graph_completed.
 * Stable Event IDs make a retried finish a no-op. A Task no longer running for this Agent (its
 * Change was cancelled meanwhile) is left as it is: the run ends, and PRECONDITION_FAILED says why.
 */
export async function finishTask(
  db: Db,
  f: {
    taskId: string;
    runId: string;
    /** The runner's epoch (./run-fence.ts); none: a run no runner claimed. */
    epoch?: number;
    agentId: string;
    outcome: "completed" | "failed";
    changeSetId?: string | null;
    reason?: string;
  },
  deps: WorkGraphDeps,
): Promise<{ changed: boolean; graphComplete: boolean }> {
  type Finished = { changed: boolean; graphComplete: boolean } | { refused: string };
  const finished = await withTransaction(db, async (ctx): Promise<Finished> => {
    const t = await ctx.tx.task.findUnique({ where: { id: f.taskId }, select: { changeId: true } });
    if (!t) throw new DomainError("NOT_FOUND", `task ${f.taskId} not found`);
    const owner = await lockResourceRow(ctx, `change:${t.changeId}`);
    const now = deps.now();
    await fenceRun(ctx.tx, { runId: f.runId, epoch: f.epoch ?? UNCLAIMED_EPOCH }, now);
    await moveRuns(ctx.tx, { id: f.runId }, f.outcome, {
      data: { error: f.outcome === "failed" ? (f.reason ?? null) : null, updatedAt: now },
    });
    const task = await ctx.tx.task.findUniqueOrThrow({ where: { id: f.taskId } });
    if (task.state === f.outcome) return { changed: false, graphComplete: false };
    if (task.state !== "running" || task.agentId !== f.agentId) {
      const holder = task.agentId ? ` (held by ${task.agentId})` : "";
      return { refused: `task ${task.key} is ${task.state}${holder}, not running for ${f.agentId}` };
    }
    const actor = { kind: "agent" as const, id: f.agentId };
    await moveOne(`task ${task.id}`, f.outcome, moveTasks(ctx.tx, { id: task.id }, f.outcome));
    const events: EventEnvelope[] = [
      f.outcome === "completed"
        ? changeEvent(owner, "task.completed", {
            taskId: task.id,
            attempt: task.attempt,
            actor,
            now,
            payload: { runId: f.runId, changeSetId: f.changeSetId ?? null },
          })
        : changeEvent(owner, "task.failed", {
            taskId: task.id,
            attempt: task.attempt,
            actor,
            now,
            payload: { reason: f.reason ?? "the agent run failed" },
          }),
      ...claimReleased(owner, task, { now }),
    ];
    const started = f.outcome === "completed" ? await verificationIfGraphComplete(ctx, owner, now) : null;
    if (started) events.push(started);
    await appendToOutbox(ctx, events, deps);
    return { changed: true, graphComplete: started !== null };
  });
  if ("refused" in finished) throw new DomainError("PRECONDITION_FAILED", finished.refused);
  return finished;
}

/**
 * After a Task completed, in the same transaction: when every Task of the Change has completed,
 * the Change is verifying and verification.started (reason work_graph_completed) is the Event to
 * write; null otherwise. An Agent's finish and a person's fixture both end here.
 */
export async function verificationIfGraphComplete(
  ctx: TxContext,
  owner: LockedChange,
  now: Date,
): Promise<EventEnvelope | null> {
  const all = await loadTasks(ctx, owner.id);
  if (!isGraphComplete(all)) return null;
  // Each completion of the graph after a retry is a round of its own (round 1 keeps the old ID).
  const round = 1 + all.reduce((n, x) => n + x.attempt - 1, 0);
  await moveOne(`change ${owner.id}`, "verifying", moveChanges(ctx.tx, { id: owner.id }, "verifying"));
  return changeEvent(owner, "verification.started", {
    attempt: round,
    actor: { kind: "system", id: "rhumbatron" },
    now,
    payload: { reason: "work_graph_completed", candidateId: null },
  });
}

/**
 * Cancels a Change in any state that is not final (open, verifying, conflicted): its Tasks that
 * have not finished are blocked (limit `cancelled`; a running Agent run sees it and stops its
 * commands, and a running Task's claim is released), its open Candidates are cancelled (a running verification then records nothing), it
 * leaves the landing queue, and change.cancelled is written. A repeat answers the same result.
 */
export async function cancelChange(
  db: Db,
  c: { tenantId: string; changeId: string; actorId: string; reason: string },
  deps: WorkGraphDeps,
): Promise<{ cancelled: true; candidates: string[] }> {
  return withTransaction(db, async (ctx) => {
    const owner = await lockResourceRow(ctx, `change:${c.changeId}`).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === "NOT_FOUND") return null;
      throw err;
    });
    if (!owner || owner.tenantId !== c.tenantId) throw new DomainError("NOT_FOUND", `change ${c.changeId} not found`);
    const change = await ctx.tx.change.findUniqueOrThrow({ where: { id: c.changeId } });
    if (change.status === "cancelled") {
      const cancelled = await ctx.tx.candidate.findMany({
        where: { changeId: c.changeId, status: "cancelled" },
        orderBy: { id: "asc" },
        select: { id: true },
      });
      return { cancelled: true, candidates: cancelled.map((x) => x.id) };
    }
    if (change.status === "promoted")
      throw new DomainError(
        "PRECONDITION_FAILED",
        "the change is promoted: it is canonical now and cannot be cancelled",
      );
    await moveOne(
      `change ${c.changeId}`,
      "cancelled",
      moveChanges(ctx.tx, { id: c.changeId }, "cancelled", {
        data: { landWhenReady: false, landingSince: null },
      }),
    );
    const unfinished = await ctx.tx.task.findMany({
      where: { changeId: c.changeId, state: { in: statusesInto(TASK_TRANSITIONS, "blocked") } },
    });
    await moveTasks(ctx.tx, { id: { in: unfinished.map((t) => t.id) } }, "blocked", {
      data: { blockedLimit: "cancelled" },
    });
    const candidates = await ctx.tx.candidate.findMany({
      where: { changeId: c.changeId, status: { in: candidateStatusesInto("cancelled") } },
      orderBy: { id: "asc" },
      select: { id: true },
    });
    await moveCandidates(ctx.tx, { id: { in: candidates.map((x) => x.id) } }, "cancelled");
    const now = deps.now();
    const actor = { kind: "user" as const, id: c.actorId };
    await appendToOutbox(
      ctx,
      [
        ...unfinished.map((t) =>
          changeEvent(owner, "task.blocked", {
            taskId: t.id,
            key: "cancelled",
            attempt: t.attempt,
            actor,
            now,
            payload: { limit: "cancelled", reason: c.reason },
          }),
        ),
        ...unfinished.flatMap((t) => claimReleased(owner, t, { actor, now })),
        changeEvent(owner, "change.cancelled", {
          actor,
          now,
          payload: { reason: c.reason, candidateIds: candidates.map((x) => x.id), actorId: c.actorId },
        }),
      ],
      deps,
    );
    return { cancelled: true, candidates: candidates.map((x) => x.id) };
  });
}
