import { DomainError, type QueuePurpose } from "@rhumbatron/core";
import type { CommandHandler } from "@rhumbatron/runtime";
import { appendToOutbox, type EnqueueDeps, putOnQueue } from "@rhumbatron/runtime";
import { namesOf, REMOVED_USER } from "../auth/people.ts";
import type { Db } from "../client.ts";
import { claimReleased } from "../events/claims.ts";
import { changeEvent, projectEvent } from "../events/factory.ts";
import { lockProjectRow, lockResourceRow } from "../events/owners.ts";
import { moveTasks } from "../statuses/moves.ts";
import { type TxContext, withTransaction } from "../transaction.ts";

/**
 * The dead-letter path: a command whose retries ran out lands on the dead-letter queue (its queue's
 * policy in config.queues.policies). The consumer of the dead-letter queue records the poison
 * command (idempotent on command_id), blocks its Task with blocked_limit `dead_letter`, writes
 * task.failed through the Change's shard outbox, and dead_letter.recorded on the project (the
 * tenant's operators are told in their inbox). It never re-sends a command: only an operator's
 * Retry does.
 */
export const DEAD_LETTER_CONSUMER = "rhumbatron-event-router";

export function deadLetterHandler(deps: EnqueueDeps): CommandHandler {
  return {
    commandTypes: "*",
    async handle(ctx) {
      const { command, message } = ctx;
      const reason = message.lastError ?? "no error recorded";
      const existing = await ctx.tx.deadLetter.findUnique({ where: { commandId: command.commandId } });
      // A second delivery of the same dead letter writes nothing new.
      if (existing && existing.status === "open") return "done";
      const occurrence = existing ? existing.attempts + 1 : 1;
      const id = existing?.id ?? `dl_${command.commandId}`;
      if (existing) {
        // The command failed again after an operator's Retry: the same record opens again.
        await ctx.tx.deadLetter.update({
          where: { id: existing.id },
          // The envelope as it failed this time (its attempt count), so the next Retry sends the latest one.
          data: {
            status: "open",
            reason,
            payload: command as object,
            attempts: occurrence,
            resolvedAt: null,
            resolvedBy: null,
            resolveNote: null,
          },
        });
      } else {
        await ctx.tx.deadLetter.create({
          data: {
            id,
            kind: "command",
            commandId: command.commandId,
            consumer: DEAD_LETTER_CONSUMER,
            originQueue: message.originQueue,
            projectId: command.projectId,
            reason,
            payload: command as object,
            attempts: occurrence,
          },
        });
      }
      if (command.taskId && command.changeId)
        await blockTask(ctx, command.changeId, command.taskId, command.commandId, occurrence, reason, deps);
      // After the Change's lock, as every writer takes them: a Change's row before its project's.
      await recordedEvent(ctx, { id, command, originQueue: message.originQueue, reason, attempts: occurrence }, deps);
      return "done";
    },
  };
}

/** dead_letter.recorded on the project's root; nothing when the project is gone. */
async function recordedEvent(
  ctx: TxContext,
  d: {
    id: string;
    command: { commandId: string; commandType: string; projectId: string };
    originQueue: string | null;
    reason: string;
    attempts: number;
  },
  deps: EnqueueDeps,
) {
  const root = await lockProjectRow(ctx, d.command.projectId).catch((err: unknown) => {
    if (err instanceof DomainError && err.code === "NOT_FOUND") return null;
    throw err;
  });
  if (!root) return;
  const event = projectEvent(root, "dead_letter.recorded", {
    actor: { kind: "system", id: DEAD_LETTER_CONSUMER },
    causedBy: d.command.commandId,
    now: deps.now(),
    payload: {
      deadLetterId: d.id,
      commandId: d.command.commandId,
      commandType: d.command.commandType,
      originQueue: d.originQueue,
      reason: d.reason,
      attempts: d.attempts,
    },
  });
  await appendToOutbox(ctx, [event], deps);
}

async function blockTask(
  ctx: TxContext,
  changeId: string,
  taskId: string,
  commandId: string,
  occurrence: number,
  reason: string,
  deps: EnqueueDeps,
) {
  const owner = await lockResourceRow(ctx, `change:${changeId}`).catch((err: unknown) => {
    if (err instanceof DomainError && err.code === "NOT_FOUND") return null;
    throw err;
  });
  if (!owner) return;
  const before = await ctx.tx.task.findFirst({ where: { id: taskId, changeId } });
  const blocked = await moveTasks(ctx.tx, { id: taskId, changeId }, "blocked", {
    data: { blockedLimit: "dead_letter" },
  });
  if (blocked === 0) return;
  const event = changeEvent(owner, "task.failed", {
    taskId,
    key: `dead_letter:${commandId}:${occurrence}`,
    actor: { kind: "system", id: DEAD_LETTER_CONSUMER },
    causedBy: commandId,
    now: deps.now(),
    payload: { reason: `dead letter: ${reason}` },
  });
  // A running Task that is blocked lets go of its paths.
  const actor = { kind: "system" as const, id: DEAD_LETTER_CONSUMER };
  const released = before ? claimReleased(owner, before, { actor, causedBy: commandId, now: deps.now() }) : [];
  await appendToOutbox(ctx, [event, ...released], deps);
}

async function lockOwnDeadLetter(ctx: TxContext, id: string, tenantId: string) {
  const rows = await ctx.tx.$queryRaw<{ id: string; project_id: string | null }[]>`
    SELECT d.id, d.project_id FROM dead_letters d JOIN projects p ON p.id = d.project_id
    WHERE d.id = ${id} AND p.tenant_id = ${tenantId} FOR UPDATE OF d`;
  if (!rows[0]) throw new DomainError("NOT_FOUND", `dead letter ${id} not found`);
  return ctx.tx.deadLetter.findUniqueOrThrow({ where: { id } });
}

export interface OperatorAction {
  tenantId: string;
  deadLetterId: string;
  operatorId: string;
}

/**
 * Retry: sends the command back to its origin queue, once. The record moves to `retried` in the
 * same transaction, so a second Retry finds it already retried and sends nothing.
 */
export async function retryDeadLetter(
  db: Db,
  a: OperatorAction,
  deps: EnqueueDeps,
): Promise<{ queue: string; commandId: string }> {
  return withTransaction(db, async (ctx) => {
    const dl = await lockOwnDeadLetter(ctx, a.deadLetterId, a.tenantId);
    if (dl.status !== "open") throw new DomainError("CONFLICT", `dead letter ${dl.id} is already ${dl.status}`);
    if (dl.kind !== "command" || !dl.originQueue) {
      throw new DomainError("PRECONDITION_FAILED", `a ${dl.kind} dead letter cannot be retried; dismiss it instead`);
    }
    const command = dl.payload as { attempt?: number } & Record<string, unknown>;
    const envelope = { ...(command as object), attempt: (command.attempt ?? 0) + 1 } as Parameters<
      typeof putOnQueue
    >[2];
    await putOnQueue(ctx, dl.originQueue as QueuePurpose, envelope, deps);
    await ctx.tx.deadLetter.update({
      where: { id: dl.id },
      data: { status: "retried", resolvedAt: deps.now(), resolvedBy: a.operatorId, resolveNote: null },
    });
    return { queue: dl.originQueue, commandId: envelope.commandId };
  });
}

/** Dismiss: records who, when and why; sends nothing. */
export async function dismissDeadLetter(db: Db, a: OperatorAction & { reason: string }, now: Date): Promise<void> {
  if (!a.reason.trim()) throw new DomainError("INVALID_INPUT", "a dismissal needs a reason");
  await withTransaction(db, async (ctx) => {
    const dl = await lockOwnDeadLetter(ctx, a.deadLetterId, a.tenantId);
    if (dl.status !== "open") throw new DomainError("CONFLICT", `dead letter ${dl.id} is already ${dl.status}`);
    await ctx.tx.deadLetter.update({
      where: { id: dl.id },
      data: { status: "dismissed", resolvedAt: now, resolvedBy: a.operatorId, resolveNote: a.reason.trim() },
    });
  });
}

export async function listDeadLetters(
  db: Db,
  p: { tenantId: string; status: "open" | "retried" | "dismissed"; limit: number },
) {
  const projects = await db.project.findMany({ where: { tenantId: p.tenantId }, select: { id: true, name: true } });
  const names = new Map(projects.map((x) => [x.id, x.name]));
  const rows = await db.deadLetter.findMany({
    where: { projectId: { in: [...names.keys()] }, status: p.status },
    orderBy: { createdAt: "desc" },
    take: p.limit,
  });
  const people = await namesOf(
    db,
    rows.map((r) => r.resolvedBy),
  );
  return rows.map((r) => ({
    ...r,
    projectName: r.projectId ? (names.get(r.projectId) ?? r.projectId) : null,
    resolvedByName: r.resolvedBy ? (people.get(r.resolvedBy) ?? REMOVED_USER) : null,
  }));
}
