import {
  type CommandEnvelope,
  commandEnvelopeSchema,
  type DeliveryAction,
  type DeliveryOutcome,
  decideDelivery,
  type HandlerResult,
  type QueuePurpose,
} from "@rhumbatron/core";
import { heldByDeadWorker, takeoverCutoff } from "../leases/holders.ts";
import { claimWhileWorking, doneWorking, orphanedBy } from "../leases/working.ts";
import type { Database as Db } from "../sql.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import type {
  CommandHandler,
  HandlerContext,
  LeasedMessage,
  QueueConsumerDeps,
  QueueRunResult,
} from "./consumer-types.ts";
import { type EnqueueDeps, putOnQueue } from "./enqueue.ts";
import { LeaseLost, type Settlement, settle } from "./settle.ts";

/**
 * A queue consumer (config.queues.policies). It leases up to a batch of available messages
 * (FOR UPDATE SKIP LOCKED; a lease that runs out brings a crashed consumer's messages back), runs
 * the handler for each one, and then acks, retries after the queue's delay, or applies the queue's
 * exhaustion rule. A handler runs inside the transaction that acks its message, so its database
 * effect and the ack commit together: a consumer killed mid-batch leaves no half-handled message.
 * Slow outside work (git, blobs) goes in the handler's prepare, before that transaction opens.
 */

export type {
  CommandHandler,
  HandlerContext,
  LeasedMessage,
  PrepareContext,
  QueueConsumerDeps,
  QueueRunResult,
} from "./consumer-types.ts";
export { LeaseLost } from "./settle.ts";

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
  const deadHolder = heldByDeadWorker(
    "lease_owner",
    takeoverCutoff(now, deps.config.worker.takeoverSeconds),
    deps.owner,
  );
  const orphan = orphanedBy("lease_owner", "id::text", deps.owner, busy);
  // The lease commits without waiting for its WAL flush (synchronous_commit off for this one
  // statement's transaction): it is visible at once, and the batch's ack, a synchronous commit
  // after it, flushes it. Only a Postgres crash before that flush can lose it, and then the
  // messages are simply unleased again with their delivery uncounted: nothing was settled either.
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
    WHERE (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL AND id IN (
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

/** A leased message with the handler that runs it, or the outcome it has without one. */
type Routed =
  | { kind: "run"; m: LeasedMessage; handler: CommandHandler; command: CommandEnvelope }
  | { kind: "decided"; m: LeasedMessage; outcome: DeliveryOutcome };

function route(m: LeasedMessage, handlers: readonly CommandHandler[]): Routed {
  const parsed = commandEnvelopeSchema.safeParse(m.envelope);
  if (!parsed.success) {
    return {
      kind: "decided",
      m,
      outcome: { kind: "failed", error: `malformed command envelope: ${parsed.error.message}` },
    };
  }
  const handler = handlerFor(handlers, parsed.data.commandType);
  if (!handler) return { kind: "decided", m, outcome: { kind: "unknown_type", commandType: parsed.data.commandType } };
  return { kind: "run", m, handler, command: parsed.data };
}

/**
 * Delivers one leased message in a transaction of its own (after its handler's prepare) and settles
 * it. Throws LeaseLost, with nothing of the handler's committed, if another delivery has it now.
 */
export async function deliverMessage(
  db: Db,
  m: LeasedMessage,
  handlers: readonly CommandHandler[],
  deps: QueueConsumerDeps,
): Promise<DeliveryAction> {
  const now = deps.now();
  const r = route(m, handlers);
  let outcome: DeliveryOutcome;
  if (r.kind === "decided") outcome = r.outcome;
  else {
    const { handler, command } = r;
    try {
      // Slow outside work first, with no transaction open; then the handler's rows and the ack
      // (or redelivery, or deferral) in one transaction.
      const prepared = handler.prepare ? await handler.prepare({ db, message: m, command, now }) : undefined;
      return await withTransaction(db, async (ctx) => {
        const result = await handler.handle({ ...ctx, message: m, command, now, prepared });
        const a = decideDelivery({ kind: "handled", result }, m.deliveries, m.queue, deps.config, now);
        await settle(ctx, [{ m, a }], deps);
        return a;
      });
    } catch (err) {
      if (err instanceof LeaseLost) throw err;
      outcome = { kind: "failed", error: errorText(err) };
    }
  }
  const a = decideDelivery(outcome, m.deliveries, m.queue, deps.config, now);
  await withTransaction(db, async (ctx) => {
    if (a.action === "record_failure" && r.kind === "run") await r.handler.onExhausted?.(ctx, m, a.error);
    await settle(ctx, [{ m, a }], deps);
  });
  return a;
}

/** A handler threw in a batch delivered without savepoints: the batch is delivered again with them. */
class HandlerThrew extends Error {
  constructor(
    readonly messageId: bigint,
    readonly error: string,
  ) {
    super(error);
  }
}

/**
 * Delivers a batch in ONE transaction and settles it in one statement. A consumer that dies
 * mid-batch commits nothing, so every message comes back after the lease and its effect happens once.
 *
 * The batch runs first without savepoints (a savepoint costs a round trip per message). If a
 * handler throws, that transaction rolls back and the batch runs again with a savepoint around
 * each handler, so only the failing message's effects are rolled back and the others still ack.
 * The handler that threw is not run again: its delivery failed with the error it threw. (The
 * others run again; their first run left nothing, as after a crash.) A message another delivery
 * has taken meanwhile (LeaseLost) is left to it, and the batch runs again without it.
 */
async function deliverBatch(
  db: Db,
  messages: LeasedMessage[],
  handlers: readonly CommandHandler[],
  deps: QueueConsumerDeps,
): Promise<DeliveryAction[]> {
  const routed = messages.map((m) => route(m, handlers));
  const lost = new Set<bigint>();
  let threw: Map<bigint, string> | undefined;
  for (;;) {
    const live = routed.filter((r) => !lost.has(r.m.id));
    if (live.length === 0) return [];
    try {
      return await withTransaction(db, (ctx) => runBatch(ctx, live, deps, threw), { timeoutMs: 60_000 });
    } catch (err) {
      if (err instanceof HandlerThrew && !threw) threw = new Map([[err.messageId, err.error]]);
      else if (err instanceof LeaseLost) {
        for (const id of err.messageIds) lost.add(id);
        deps.log?.({ queue: live[0]?.m.queue, messageIds: err.messageIds.map(String) }, err.message);
      } else throw err;
    }
  }
}

/** One pass over a batch; `threw` (the errors of the first pass) asks for savepoints. */
async function runBatch(
  ctx: TxContext,
  routed: readonly Routed[],
  deps: QueueConsumerDeps,
  threw: Map<bigint, string> | undefined,
): Promise<DeliveryAction[]> {
  const settled: Settlement[] = [];
  for (const r of routed) {
    const { m } = r;
    const now = deps.now();
    let outcome: DeliveryOutcome;
    if (r.kind === "decided") outcome = r.outcome;
    else if (threw?.has(m.id)) outcome = { kind: "failed", error: threw.get(m.id) as string };
    else {
      const hctx: HandlerContext = { ...ctx, message: m, command: r.command, now };
      if (!threw) {
        let result: HandlerResult;
        try {
          result = await r.handler.handle(hctx);
        } catch (err) {
          throw new HandlerThrew(m.id, errorText(err));
        }
        settled.push({ m, a: decideDelivery({ kind: "handled", result }, m.deliveries, m.queue, deps.config, now) });
        continue;
      }
      // Savepoints nest; a later ROLLBACK TO undoes only the most recent one, this message's.
      await ctx.tx.$executeRaw`SAVEPOINT queue_message`;
      try {
        const result = await r.handler.handle(hctx);
        settled.push({ m, a: decideDelivery({ kind: "handled", result }, m.deliveries, m.queue, deps.config, now) });
        continue;
      } catch (err) {
        await ctx.tx.$executeRaw`ROLLBACK TO SAVEPOINT queue_message`;
        outcome = { kind: "failed", error: errorText(err) };
      }
    }
    const a = decideDelivery(outcome, m.deliveries, m.queue, deps.config, now);
    if (a.action === "record_failure" && r.kind === "run") await r.handler.onExhausted?.(ctx, m, a.error);
    settled.push({ m, a });
  }
  await settle(ctx, settled, deps);
  return settled.map((s) => s.a);
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
  for (const m of messages.filter(own)) {
    try {
      actions[(await deliverMessage(db, m, handlers, deps)).action]++;
    } catch (err) {
      // Another delivery has it now; the rest of the batch goes on.
      if (!(err instanceof LeaseLost)) throw err;
      deps.log?.({ queue: purpose, messageIds: err.messageIds.map(String) }, err.message);
    }
  }
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
  const rows = await db.$queryRaw<{ command_id: string; queue: string; envelope: unknown }[]>`
    SELECT command_id, queue, envelope FROM deferred_commands ORDER BY deferred_at`;
  let n = 0;
  for (const r of rows) {
    const env = commandEnvelopeSchema.safeParse(r.envelope);
    await withTransaction(db, async (ctx) => {
      if (env.success) {
        if (await putOnQueue(ctx, r.queue as QueuePurpose, { ...env.data, attempt: env.data.attempt + 1 }, deps)) n++;
      }
      await ctx.tx.$executeRaw`DELETE FROM deferred_commands WHERE command_id = ${r.command_id}`;
    });
  }
  return n;
}

/** Messages past the queue's retention are dropped, as the queue service would (1 day). */
export async function expireQueueMessages(db: Db, now: Date): Promise<number> {
  return db.$executeRaw`DELETE FROM queue_messages WHERE expires_at <= ${now}`;
}
