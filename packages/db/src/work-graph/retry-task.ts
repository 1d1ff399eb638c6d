import { type Actor, commandIds, completedTasksRerunnable, DomainError, TASK_STATE_SETS } from "@rhumbatron/core";
import { appendToOutbox, enqueueCommand } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { lockResourceRow } from "../events/owners.ts";
import { moveChanges, moveOne, moveTasks } from "../statuses/moves.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { changeEvent, type WorkGraphDeps } from "./shared.ts";

/** Task states a person may retry; a completed Task only when its Change's newest Candidate conflicted or was rejected. */
const RETRYABLE = new Set<string>(TASK_STATE_SETS.retryable);

/**
 * Retries a failed or blocked Task (docs/landing.md, Cancel, retry, resume), or re-runs a completed one whose
 * Change could not be composed on the current generation (a conflict): a new attempt with its own
 * wake command and Event IDs, dispatched like any ready Task; the earlier runs and their records
 * stay. The Change is open again until every Task has completed.
 */
export async function retryTask(
  db: Db,
  q: { tenantId: string; taskId: string; actorId: string },
  deps: WorkGraphDeps,
): Promise<{ taskId: string; attempt: number }> {
  return withTransaction(db, (ctx) =>
    retryTaskIn(ctx, { tenantId: q.tenantId, taskId: q.taskId, actor: { kind: "user", id: q.actorId } }, deps),
  );
}

/**
 * retryTask inside the caller's transaction, by any actor (the Sandbox budget's resume retries as
 * system `sandbox-budget`). Locks the Task's Change first, so it decides on the Task as committed.
 */
export async function retryTaskIn(
  ctx: TxContext,
  q: { tenantId: string; taskId: string; actor: Actor },
  deps: WorkGraphDeps,
): Promise<{ taskId: string; attempt: number }> {
  const found = await ctx.tx.task.findUnique({ where: { id: q.taskId }, select: { changeId: true } });
  if (!found) throw new DomainError("NOT_FOUND", `task ${q.taskId} not found`);
  const owner = await lockResourceRow(ctx, `change:${found.changeId}`);
  if (owner.tenantId !== q.tenantId) throw new DomainError("NOT_FOUND", `task ${q.taskId} not found`);
  const change = await ctx.tx.change.findUniqueOrThrow({ where: { id: owner.id } });
  const task = await ctx.tx.task.findUniqueOrThrow({ where: { id: q.taskId } });
  if (change.status === "promoted" || change.status === "cancelled") {
    throw new DomainError("PRECONDITION_FAILED", `the change is ${change.status}: its Tasks can no longer be retried`);
  }
  const newest = await ctx.tx.candidate.findFirst({ where: { changeId: owner.id }, orderBy: { createdAt: "desc" } });
  const approval = newest ? await ctx.tx.approval.findUnique({ where: { candidateId: newest.id } }) : null;
  const rerunnable = completedTasksRerunnable({
    changeStatus: change.status,
    newestCandidate: newest && {
      status: newest.status,
      rejectionReason: newest.rejectionReason,
      approvalRejected: approval?.decision === "rejected",
    },
  });
  if (!RETRYABLE.has(task.state) && !(task.state === "completed" && rerunnable)) {
    throw new DomainError(
      "PRECONDITION_FAILED",
      `task ${task.key} is ${task.state}; only a failed or blocked Task can be retried, or a completed one whose Change's newest Candidate conflicted or was rejected`,
    );
  }
  const attempt = task.attempt + 1;
  const now = deps.now();
  await moveOne(
    `task ${task.id}`,
    "pending",
    moveTasks(ctx.tx, { id: task.id }, "pending", {
      data: { dispatched: false, agentId: null, blockedLimit: null, blockedCause: null, attempt },
    }),
  );
  if (change.status !== "open")
    await moveOne(`change ${owner.id}`, "open", moveChanges(ctx.tx, { id: owner.id }, "open"));
  await appendToOutbox(
    ctx,
    [
      changeEvent(owner, "task.retried", {
        taskId: task.id,
        attempt,
        actor: q.actor,
        now,
        payload: { key: task.key, attempt, previousState: task.state },
      }),
    ],
    deps,
  );
  await enqueueCommand(
    ctx,
    {
      commandType: "change.dispatch",
      commandId: commandIds.dispatchRetry(task.id, attempt),
      projectId: owner.projectId,
      changeId: owner.id,
      taskId: null,
      payload: { reason: "task retried" },
    },
    deps,
  );
  return { taskId: task.id, attempt };
}

/** How a run that failed before its Agent started says so (agent_runs.error starts with it). */
export const START_FAILURE = "the run could not start:";

/**
 * After a run failed before its Agent started (one of this system's own steps: the fork, the
 * checkout, the Context Packet), the Task is retried as system `agent-runner`, up to
 * config.causal.startRetriesPerTask such runs per Task; past it the Task stays failed for a person.
 * Nothing of the Agent's was lost, so a new attempt is safe. Returns whether it retried.
 */
export async function retryAfterStartFailure(
  db: Db,
  q: { taskId: string; changeId: string },
  deps: WorkGraphDeps,
): Promise<boolean> {
  const failedStarts = await db.agentRun.count({
    where: { taskId: q.taskId, status: "failed", error: { startsWith: START_FAILURE } },
  });
  if (failedStarts > deps.config.causal.startRetriesPerTask) return false;
  const change = await db.change.findUnique({
    where: { id: q.changeId },
    select: { project: { select: { tenantId: true } } },
  });
  if (!change) return false;
  try {
    await withTransaction(db, (ctx) =>
      retryTaskIn(
        ctx,
        { tenantId: change.project.tenantId, taskId: q.taskId, actor: { kind: "system", id: "agent-runner" } },
        deps,
      ),
    );
    return true;
  } catch (err) {
    // Cancelled or retried by someone meanwhile: the Task is where a person put it.
    if (err instanceof DomainError && err.code === "PRECONDITION_FAILED") return false;
    throw err;
  }
}
