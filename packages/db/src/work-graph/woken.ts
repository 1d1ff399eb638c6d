import { DomainError, recheckWake, type WakeCause, type WakeRecheck } from "@rhumbatron/core";
import { appendToOutbox } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { lockResourceRow } from "../events/owners.ts";
import { moveRuns } from "../statuses/moves.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { changeEvent, type WorkGraphDeps } from "./shared.ts";

/**
 * A wake reaching the Agent (docs/agents.md, Intents, claims and challenges). The wake consumer queued a
 * run for it; the Agent's running work takes it (or, when none is running, the runner does), checks
 * it again against the state now (recheckWake in core) and records, in one transaction: the woken
 * run ended with what the Agent did (`note`: continued, or stopped and why) and agent.woken, whose
 * ID is keyed by the wake command, so a wake reaches its Agent once whoever takes it.
 */
export interface WakeReceipt extends WakeRecheck {
  runId: string;
  reason: string;
  causeEventId: string | null;
}

interface StoredWake {
  causeEventId?: string | null;
  causeType?: string | null;
  causeTaskId?: string | null;
  eventPaths?: string[];
  overlapping?: string[];
}

/** The wakes waiting for a Task's running work, oldest first. */
export async function pendingWakes(db: Db, t: { changeId: string; taskId: string }): Promise<string[]> {
  const rows = await db.agentRun.findMany({
    where: { changeId: t.changeId, taskId: t.taskId, status: "queued", reason: { not: "dispatch" }, alternative: 1 },
    orderBy: { createdAt: "asc" },
    select: { id: true },
  });
  return rows.map((r) => r.id);
}

/** Receives one woken run's wake; null when it was received already (by the running work or the runner). */
export async function receiveWake(
  db: Db,
  r: { runId: string; editedPaths: readonly string[] },
  deps: WorkGraphDeps,
): Promise<WakeReceipt | null> {
  return withTransaction(db, async (ctx) => {
    const found = await ctx.tx.agentRun.findUnique({ where: { id: r.runId }, select: { changeId: true } });
    if (!found) throw new DomainError("NOT_FOUND", `run ${r.runId} not found`);
    const owner = await lockResourceRow(ctx, `change:${found.changeId}`);
    const run = await ctx.tx.agentRun.findUniqueOrThrow({ where: { id: r.runId } });
    if (run.reason === "dispatch" || (run.status !== "queued" && run.status !== "running")) return null;
    const task = await ctx.tx.task.findUniqueOrThrow({ where: { id: run.taskId } });
    const wake = (run.wake ?? {}) as StoredWake;
    const cause = wake.causeTaskId ? await loadCause(ctx, wake.causeTaskId) : null;
    const decision = recheckWake(
      run.agentId,
      { reason: run.reason, causeType: wake.causeType ?? undefined, eventPaths: wake.eventPaths },
      {
        state: task.state,
        agentId: task.agentId,
        intents: task.intents as { paths: string[]; prefixes: string[] },
        editedPaths: r.editedPaths,
      },
      cause,
      cause?.changeId === run.changeId,
    );
    const now = deps.now();
    await moveRuns(ctx.tx, { id: run.id }, "completed", { data: { note: decision.note, updatedAt: now } });
    await appendToOutbox(
      ctx,
      [
        changeEvent(owner, "agent.woken", {
          taskId: task.id,
          key: run.wakeCommandId,
          actor: { kind: "agent", id: run.agentId },
          causedBy: wake.causeEventId ?? null,
          now,
          payload: {
            agentId: run.agentId,
            reason: run.reason,
            stale: decision.stale,
            runId: run.id,
            ...(wake.causeEventId ? { causeEventId: wake.causeEventId } : {}),
            paths: decision.paths,
            note: decision.note,
          },
        }),
      ],
      deps,
    );
    return { ...decision, runId: run.id, reason: run.reason, causeEventId: wake.causeEventId ?? null };
  });
}

/** The causing Task as it is now: its state, its Change's status, what it holds and its latest ChangeSet. */
async function loadCause(ctx: TxContext, taskId: string): Promise<WakeCause | null> {
  const t = await ctx.tx.task.findUnique({ where: { id: taskId }, include: { change: { select: { status: true } } } });
  if (!t) return null;
  const cs = await ctx.tx.changeSet.findFirst({
    where: { taskId },
    orderBy: { createdAt: "desc" },
    select: { paths: true },
  });
  return {
    taskKey: t.key,
    state: t.state,
    changeId: t.changeId,
    changeStatus: t.change.status,
    held: t.intents as { paths: string[]; prefixes: string[] },
    changeSetPaths: cs ? cs.paths : null,
  };
}
