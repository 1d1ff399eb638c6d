import { DomainError, type EventEnvelope, isGraphComplete } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { appendToOutbox, lockResourceRow } from "../events/outbox.ts";
import { withTransaction } from "../transaction.ts";
import { loadTasks } from "./dispatch.ts";
import { changeEvent, type WorkGraphDeps } from "./shared.ts";

/**
 * An Agent finished its Task: task.completed (or task.failed) through the shard outbox. When every
 * Task of the Change has completed, the shard also writes verification.started with reason
 * work_graph_completed. Stable Event IDs make a retried finish a no-op.
 */
export async function finishTask(
  db: Db,
  f: {
    taskId: string;
    runId: string;
    agentId: string;
    outcome: "completed" | "failed";
    changeSetId?: string | null;
    reason?: string;
  },
  deps: WorkGraphDeps,
): Promise<{ changed: boolean; graphComplete: boolean }> {
  return withTransaction(db, async (ctx) => {
    const t = await ctx.tx.task.findUnique({ where: { id: f.taskId }, select: { changeId: true } });
    if (!t) throw new DomainError("NOT_FOUND", `task ${f.taskId} not found`);
    const owner = await lockResourceRow(ctx, `change:${t.changeId}`);
    const task = await ctx.tx.task.findUniqueOrThrow({ where: { id: f.taskId } });
    if (task.state === f.outcome) return { changed: false, graphComplete: false };
    if (task.state !== "running" || task.agentId !== f.agentId) {
      throw new DomainError(
        "PRECONDITION_FAILED",
        `task ${task.key} is ${task.state}${task.agentId ? ` (held by ${task.agentId})` : ""}, not running for ${f.agentId}`,
      );
    }
    const now = deps.now();
    const actor = { kind: "agent" as const, id: f.agentId };
    await ctx.tx.task.update({ where: { id: task.id }, data: { state: f.outcome } });
    await ctx.tx.agentRun.updateMany({ where: { id: f.runId }, data: { status: f.outcome } });
    const events: EventEnvelope[] = [
      f.outcome === "completed"
        ? changeEvent(owner, "task.completed", {
            taskId: task.id,
            actor,
            now,
            payload: { runId: f.runId, changeSetId: f.changeSetId ?? null },
          })
        : changeEvent(owner, "task.failed", {
            taskId: task.id,
            actor,
            now,
            payload: { reason: f.reason ?? "the agent run failed" },
          }),
    ];
    const complete = f.outcome === "completed" && isGraphComplete(await loadTasks(ctx, owner.id));
    if (complete) {
      await ctx.tx.change.update({ where: { id: owner.id }, data: { status: "verifying" } });
      events.push(
        changeEvent(owner, "verification.started", {
          actor: { kind: "system", id: "rhumbatron" },
          now,
          payload: { reason: "work_graph_completed", candidateId: null },
        }),
      );
    }
    await appendToOutbox(ctx, events, deps);
    return { changed: true, graphComplete: complete };
  });
}

/** Cancels an open Change: Tasks that have not started are blocked (limit `cancelled`). */
export async function cancelChange(
  db: Db,
  c: { tenantId: string; changeId: string; actorId: string; reason: string },
  deps: WorkGraphDeps,
) {
  return withTransaction(db, async (ctx) => {
    const owner = await lockResourceRow(ctx, `change:${c.changeId}`).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === "NOT_FOUND") return null;
      throw err;
    });
    if (!owner || owner.tenantId !== c.tenantId) throw new DomainError("NOT_FOUND", `change ${c.changeId} not found`);
    const change = await ctx.tx.change.findUniqueOrThrow({ where: { id: c.changeId } });
    if (change.status === "cancelled") return { cancelled: false };
    if (change.status !== "open")
      throw new DomainError("PRECONDITION_FAILED", `the change is ${change.status} and can no longer be cancelled`);
    await ctx.tx.change.update({ where: { id: c.changeId }, data: { status: "cancelled" } });
    const waiting = await ctx.tx.task.findMany({
      where: { changeId: c.changeId, state: { in: ["pending", "ready"] } },
    });
    await ctx.tx.task.updateMany({
      where: { id: { in: waiting.map((t) => t.id) } },
      data: { state: "blocked", blockedLimit: "cancelled" },
    });
    const now = deps.now();
    await appendToOutbox(
      ctx,
      waiting.map((t) =>
        changeEvent(owner, "task.blocked", {
          taskId: t.id,
          key: "cancelled",
          actor: { kind: "user", id: c.actorId },
          now,
          payload: { limit: "cancelled", reason: c.reason },
        }),
      ),
      deps,
    );
    return { cancelled: true };
  });
}
