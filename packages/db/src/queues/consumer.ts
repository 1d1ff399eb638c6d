import {
  type CommandEnvelope,
  commandEnvelopeSchema,
  type DeliveryAction,
  type DeliveryOutcome,
  decideDelivery,
  type HandlerResult,
  type QueuePurpose,
} from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { heldByDeadWorker, takeoverCutoff } from "../leases/holders.ts";
import { claimWhileWorking, doneWorking, orphanedBy } from "../leases/working.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { type EnqueueDeps, putOnQueue, queueChannel } from "./enqueue.ts";

/**
 * A queue consumer (config.queues.policies). It leases up to a batch of available messages
 * (FOR UPDATE SKIP LOCKED; a lease that runs out brings a crashed consumer's messages back), runs
 * the handler for each one, and then acks, retries after the queue's delay, or applies the queue's
 * exhaustion rule. A handler runs inside the transaction that acks its message, so its database
 * effect and the ack commit together: a consumer killed mid-batch leaves no half-handled message.
 * Slow outside work (git, blobs) goes in the handler's prepare, before that transaction opens.
 */
export interface LeasedMessage {
  id: bigint;
  queue: QueuePurpose;
  commandId: string;
  commandType: string;
  envelope: unknown;
  deliveries: number;
  originQueue: string | null;
  lastError: string | null;
}

export interface HandlerContext extends TxContext {
  message: LeasedMessage;
  command: CommandEnvelope;
  now: Date;
  /** What the handler's prepare returned (undefined without one). */
  prepared?: unknown;
}

/** What a handler's prepare gets: the command, outside any transaction. */
export interface PrepareContext {
  /** For reads, and for short transactions of its own (never one that waits on the outside work). */
  db: Db;
  message: LeasedMessage;
  command: CommandEnvelope;
  now: Date;
}

export interface CommandHandler {
  /** Command types this handler accepts; "*" accepts every type (the dead-letter consumer). */
  commandTypes: readonly string[] | "*";
  handle(ctx: HandlerContext): Promise<HandlerResult>;
  /**
   * Slow outside work (git, blobs, a promotion's own transactions), done before the ack's
   * transaction opens, so no transaction waits on it; its result is handed to handle as
   * ctx.prepared. A redelivery runs it again, so it must be idempotent (every such step is keyed).
   */
  prepare?(ctx: PrepareContext): Promise<unknown>;
  /** Each message gets a transaction of its own instead of sharing the batch's. */
  ownTransaction?: boolean;
  /** For queues whose exhaustion rule records the failure somewhere (indexing). */
  onExhausted?(ctx: TxContext, message: LeasedMessage, error: string): Promise<void>;
}

export interface QueueConsumerDeps extends EnqueueDeps {
  owner: string;
}

export interface QueueRunResult {
  queue: QueuePurpose;
  leased: number;
  actions: Record<DeliveryAction["action"], number>;
}

/**
 * Leases up to one batch of available messages (exported for tests that stop a consumer mid-batch).
 * It also takes back the consumer's own orphans (leases/working.ts): messages it leased whose
 * delivery ended without settling, because the database went away mid-delivery.
 */
export async function leaseMessages(db: Db, purpose: QueuePurpose, deps: QueueConsumerDeps): Promise<LeasedMessage[]> {
  return claimWhileWorking(
    deps.owner,
    "queue_message",
    { now: deps.now(), holdMs: deps.config.worker.takeoverSeconds * 1000 },
    (busy) => leaseBatch(db, purpose, deps, busy),
    (leased) => leased.map((m) => String(m.id)),
  );
}

async function leaseBatch(
  db: Db,
  purpose: QueuePurpose,
  deps: QueueConsumerDeps,
  busy: string[],
): Promise<LeasedMessage[]> {
  const now = deps.now();
  const until = new Date(now.getTime() + deps.config.queues.leaseSeconds * 1000);
  const batch = deps.config.queues.policies[purpose].batchSize;
  const deadHolder = heldByDeadWorker("lease_owner", takeoverCutoff(now, deps.config.worker.takeoverSeconds));
  const orphan = orphanedBy("lease_owner", "id::text", deps.owner, busy);
  const rows = await db.$queryRaw<
    {
      id: bigint;
      command_id: string;
      command_type: string;
      envelope: unknown;
      deliveries: number;
      origin_queue: string | null;
      last_error: string | null;
    }[]
  >`
    UPDATE queue_messages SET lease_owner = ${deps.owner}, leased_until = ${until}, deliveries = deliveries + 1
    WHERE id IN (
      SELECT id FROM queue_messages
      WHERE queue = ${purpose} AND available_at <= ${now} AND expires_at > ${now}
        AND (leased_until IS NULL OR leased_until < ${now} OR ${deadHolder} OR ${orphan})
      ORDER BY available_at, id LIMIT ${batch}
      FOR UPDATE SKIP LOCKED)
    RETURNING id, command_id, command_type, envelope, deliveries, origin_queue, last_error`;
  return rows
    .map((r) => ({
      id: r.id,
      queue: purpose,
      commandId: r.command_id,
      commandType: r.command_type,
      envelope: r.envelope,
      deliveries: r.deliveries,
      originQueue: r.origin_queue,
      lastError: r.last_error,
    }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

function handlerFor(handlers: readonly CommandHandler[], type: string): CommandHandler | undefined {
  return handlers.find((h) => h.commandTypes === "*" || h.commandTypes.includes(type));
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Delivers one leased message and settles it. */
export async function deliverMessage(
  db: Db,
  m: LeasedMessage,
  handlers: readonly CommandHandler[],
  deps: QueueConsumerDeps,
): Promise<DeliveryAction> {
  const now = deps.now();
  const parsed = commandEnvelopeSchema.safeParse(m.envelope);
  const handler = parsed.success ? handlerFor(handlers, parsed.data.commandType) : undefined;
  let outcome: DeliveryOutcome;
  let action: DeliveryAction | undefined;
  if (!parsed.success) {
    outcome = { kind: "failed", error: `malformed command envelope: ${parsed.error.message}` };
  } else if (!handler) {
    outcome = { kind: "unknown_type", commandType: parsed.data.commandType };
  } else {
    try {
      // Slow outside work first, with no transaction open; then the handler's rows and the ack
      // (or redelivery, or deferral) in one transaction.
      const prepared = handler.prepare
        ? await handler.prepare({ db, message: m, command: parsed.data, now })
        : undefined;
      action = await withTransaction(db, async (ctx) => {
        const result = await handler.handle({ ...ctx, message: m, command: parsed.data, now, prepared });
        const a = decideDelivery({ kind: "handled", result }, m.deliveries, m.queue, deps.config, now);
        await settleHandled(ctx, m, a, deps);
        return a;
      });
      return action;
    } catch (err) {
      outcome = { kind: "failed", error: errorText(err) };
    }
  }
  const a = decideDelivery(outcome, m.deliveries, m.queue, deps.config, now);
  await withTransaction(db, (ctx) => settleFailed(ctx, m, a, handler, deps));
  return a;
}

async function settleHandled(ctx: TxContext, m: LeasedMessage, a: DeliveryAction, deps: QueueConsumerDeps) {
  if (a.action === "redeliver") {
    await ctx.tx.$executeRaw`
      UPDATE queue_messages SET lease_owner = NULL, leased_until = NULL, available_at = ${new Date(0)} WHERE id = ${m.id}`;
    await deps.nudger.nudge(ctx, queueChannel(m.queue));
    return;
  }
  if (a.action === "ack_and_defer") {
    await ctx.tx.deferredCommand.upsert({
      where: { commandId: m.commandId },
      create: { commandId: m.commandId, queue: m.queue, envelope: m.envelope as object },
      update: { envelope: m.envelope as object },
    });
  }
  await ctx.tx.queueMessage.delete({ where: { id: m.id } });
}

async function settleFailed(
  ctx: TxContext,
  m: LeasedMessage,
  a: DeliveryAction,
  handler: CommandHandler | undefined,
  deps: QueueConsumerDeps,
) {
  switch (a.action) {
    case "retry":
      await ctx.tx.queueMessage.update({
        where: { id: m.id },
        data: { availableAt: a.availableAt, leaseOwner: null, leasedUntil: null, lastError: a.error },
      });
      return;
    case "dead_letter": {
      const target = deps.config.queues.policies[m.queue].deadLetterQueue ?? "dead-letter";
      const envelope = commandEnvelopeSchema.safeParse(m.envelope);
      if (envelope.success) {
        await putOnQueue(ctx, target, envelope.data, deps, { originQueue: m.queue, lastError: a.error });
      } else {
        deps.log?.({ commandId: m.commandId, queue: m.queue, error: a.error }, "malformed command dropped");
      }
      await ctx.tx.queueMessage.delete({ where: { id: m.id } });
      deps.log?.(
        { commandId: m.commandId, queue: m.queue, deliveries: m.deliveries, error: a.error },
        "command dead-lettered",
      );
      return;
    }
    case "record_failure":
      await handler?.onExhausted?.(ctx, m, a.error);
      await ctx.tx.queueMessage.delete({ where: { id: m.id } });
      deps.log?.({ commandId: m.commandId, queue: m.queue, error: a.error }, "command failed; failure recorded");
      return;
    case "drop":
      await ctx.tx.queueMessage.delete({ where: { id: m.id } });
      deps.log?.(
        { commandId: m.commandId, queue: m.queue, deliveries: m.deliveries, error: a.error },
        "command dropped after its last retry",
      );
      return;
    default:
      return;
  }
}

/**
 * Delivers a batch in ONE transaction, each message under its own savepoint: a handler that throws
 * rolls back only its own effects, and the batch's acks commit together. A consumer that dies
 * mid-batch commits nothing, so every message comes back after the lease and its effect happens once.
 */
async function deliverBatch(
  db: Db,
  messages: LeasedMessage[],
  handlers: readonly CommandHandler[],
  deps: QueueConsumerDeps,
): Promise<DeliveryAction[]> {
  return withTransaction(
    db,
    async (ctx) => {
      const actions: DeliveryAction[] = [];
      const acked: bigint[] = [];
      for (const m of messages) {
        const now = deps.now();
        const parsed = commandEnvelopeSchema.safeParse(m.envelope);
        const handler = parsed.success ? handlerFor(handlers, parsed.data.commandType) : undefined;
        let outcome: DeliveryOutcome;
        if (!parsed.success) outcome = { kind: "failed", error: `malformed command envelope: ${parsed.error.message}` };
        else if (!handler) outcome = { kind: "unknown_type", commandType: parsed.data.commandType };
        else {
          // Savepoints nest; a later ROLLBACK TO undoes only the most recent one, this message's.
          await ctx.tx.$executeRaw`SAVEPOINT queue_message`;
          try {
            const result = await handler.handle({ ...ctx, message: m, command: parsed.data, now });
            const a = decideDelivery({ kind: "handled", result }, m.deliveries, m.queue, deps.config, now);
            if (a.action === "ack") acked.push(m.id);
            else await settleHandled(ctx, m, a, deps);
            actions.push(a);
            continue;
          } catch (err) {
            await ctx.tx.$executeRaw`ROLLBACK TO SAVEPOINT queue_message`;
            outcome = { kind: "failed", error: errorText(err) };
          }
        }
        const a = decideDelivery(outcome, m.deliveries, m.queue, deps.config, now);
        await settleFailed(ctx, m, a, handler, deps);
        actions.push(a);
      }
      if (acked.length) await ctx.tx.$executeRaw`DELETE FROM queue_messages WHERE id = ANY(${acked})`;
      return actions;
    },
    { timeoutMs: 60_000 },
  );
}

/** One consumer run over one queue: lease a batch, deliver each message, settle it. */
export async function consumeQueue(
  db: Db,
  purpose: QueuePurpose,
  handlers: readonly CommandHandler[],
  deps: QueueConsumerDeps,
): Promise<QueueRunResult> {
  const messages = await leaseMessages(db, purpose, deps);
  try {
    return await deliverLeased(db, purpose, messages, handlers, deps);
  } finally {
    doneWorking(
      deps.owner,
      "queue_message",
      messages.map((m) => String(m.id)),
      deps.now(),
    );
  }
}

async function deliverLeased(
  db: Db,
  purpose: QueuePurpose,
  messages: LeasedMessage[],
  handlers: readonly CommandHandler[],
  deps: QueueConsumerDeps,
): Promise<QueueRunResult> {
  const actions: QueueRunResult["actions"] = {
    ack: 0,
    redeliver: 0,
    ack_and_defer: 0,
    retry: 0,
    dead_letter: 0,
    record_failure: 0,
    drop: 0,
  };
  const own = (m: LeasedMessage) => {
    const type = (m.envelope as { commandType?: string } | null)?.commandType ?? m.commandType;
    const h = handlerFor(handlers, type);
    // A handler with outside work runs it before its own transaction, never inside a shared one.
    return h?.ownTransaction === true || h?.prepare !== undefined;
  };
  const shared = messages.filter((m) => !own(m));
  if (shared.length) for (const a of await deliverBatch(db, shared, handlers, deps)) actions[a.action]++;
  for (const m of messages.filter(own)) actions[(await deliverMessage(db, m, handlers, deps)).action]++;
  return { queue: purpose, leased: messages.length, actions };
}

/** Queue depth, in-flight and delayed counts of one tenant's commands, for its operators. */
export async function queueStats(db: Db, tenantId: string, now: Date) {
  return db.$queryRaw<{ queue: string; depth: number; in_flight: number; delayed: number }[]>`
    SELECT m.queue,
      count(*) FILTER (WHERE (m.leased_until IS NULL OR m.leased_until < ${now}) AND m.available_at <= ${now})::int AS depth,
      count(*) FILTER (WHERE m.leased_until >= ${now})::int AS in_flight,
      count(*) FILTER (WHERE m.available_at > ${now})::int AS delayed
    FROM queue_messages m JOIN projects p ON p.id = m.project_id
    WHERE m.expires_at > ${now} AND p.tenant_id = ${tenantId}
    GROUP BY m.queue ORDER BY m.queue`;
}

/** Puts deferred bounded work back on its queue (the maintenance tick). */
export async function requeueDeferred(db: Db, deps: EnqueueDeps): Promise<number> {
  const rows = await db.deferredCommand.findMany({ orderBy: { deferredAt: "asc" } });
  let n = 0;
  for (const r of rows) {
    const env = commandEnvelopeSchema.safeParse(r.envelope);
    await withTransaction(db, async (ctx) => {
      if (env.success) {
        if (await putOnQueue(ctx, r.queue as QueuePurpose, { ...env.data, attempt: env.data.attempt + 1 }, deps)) n++;
      }
      await ctx.tx.deferredCommand.delete({ where: { commandId: r.commandId } });
    });
  }
  return n;
}

/** Messages past the queue's retention are dropped, as the queue service would (1 day). */
export async function expireQueueMessages(db: Db, now: Date): Promise<number> {
  return (await db.queueMessage.deleteMany({ where: { expiresAt: { lte: now } } })).count;
}
