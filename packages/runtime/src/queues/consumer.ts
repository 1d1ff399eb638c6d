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
import { type Database as Db, join, type Sql, sql } from "../sql.ts";
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

/** What a delivery decided for one message; a batch's decisions are written together (settle). */
interface Settlement {
  m: LeasedMessage;
  a: DeliveryAction;
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

/**
 * Another delivery has these messages now (this one's lease ran out, or they were taken over or
 * expired): whatever this delivery did for them must not commit.
 */
export class LeaseLost extends Error {
  constructor(readonly messageIds: bigint[]) {
    super(`lease lost on queue message ${messageIds.join(", ")}: another delivery has it`);
  }
}

/**
 * Writes a batch's decisions in one statement: acks and terminal outcomes are deleted, retries
 * and redeliveries released with their new availability, deferrals kept and dead letters put on
 * their dead-letter queue (a command is there at most once). Each message is settled only as the
 * delivery it was leased for (its delivery count is the fencing token); if one was leased again
 * since, nothing may commit (LeaseLost). Then the nudges, once per queue.
 */
async function settle(ctx: TxContext, settled: readonly Settlement[], deps: QueueConsumerDeps): Promise<void> {
  if (settled.length === 0) return;
  const done = { id: [] as bigint[], deliveries: [] as number[] };
  const redeliver = { id: [] as bigint[], deliveries: [] as number[] };
  const retry = { id: [] as bigint[], deliveries: [] as number[], at: [] as Date[], error: [] as string[] };
  const defer = { commandId: [] as string[], queue: [] as string[], envelope: [] as string[] };
  const dead = {
    queue: [] as string[],
    commandId: [] as string[],
    commandType: [] as string[],
    projectId: [] as string[],
    changeId: [] as (string | null)[],
    taskId: [] as (string | null)[],
    envelope: [] as string[],
    origin: [] as string[],
    error: [] as string[],
  };
  const nudge = new Set<string>();
  const logs: [Record<string, unknown>, string][] = [];
  const finish = (m: LeasedMessage) => {
    done.id.push(m.id);
    done.deliveries.push(m.deliveries);
  };
  for (const { m, a } of settled) {
    switch (a.action) {
      case "ack":
        finish(m);
        break;
      case "ack_and_defer":
        finish(m);
        defer.commandId.push(m.commandId);
        defer.queue.push(m.queue);
        defer.envelope.push(JSON.stringify(m.envelope));
        break;
      case "redeliver":
        redeliver.id.push(m.id);
        redeliver.deliveries.push(m.deliveries);
        nudge.add(m.queue);
        break;
      case "retry":
        retry.id.push(m.id);
        retry.deliveries.push(m.deliveries);
        retry.at.push(a.availableAt);
        retry.error.push(a.error);
        break;
      case "dead_letter": {
        finish(m);
        const envelope = commandEnvelopeSchema.safeParse(m.envelope);
        if (envelope.success) {
          const e = envelope.data;
          dead.queue.push(deps.config.queues.policies[m.queue].deadLetterQueue ?? "dead-letter");
          dead.commandId.push(e.commandId);
          dead.commandType.push(e.commandType);
          dead.projectId.push(e.projectId);
          dead.changeId.push(e.changeId);
          dead.taskId.push(e.taskId);
          dead.envelope.push(JSON.stringify(e));
          dead.origin.push(m.queue);
          dead.error.push(a.error);
        } else {
          logs.push([{ commandId: m.commandId, queue: m.queue, error: a.error }, "malformed command dropped"]);
        }
        logs.push([
          { commandId: m.commandId, queue: m.queue, deliveries: m.deliveries, error: a.error },
          "command dead-lettered",
        ]);
        break;
      }
      case "record_failure":
        finish(m);
        logs.push([{ commandId: m.commandId, queue: m.queue, error: a.error }, "command failed; failure recorded"]);
        break;
      case "drop":
        finish(m);
        logs.push([
          { commandId: m.commandId, queue: m.queue, deliveries: m.deliveries, error: a.error },
          "command dropped after its last retry",
        ]);
        break;
    }
  }
  const parts: Sql[] = [];
  const results: Sql[] = [];
  if (done.id.length) {
    parts.push(sql`done AS (
      DELETE FROM queue_messages q USING unnest(${done.id}::bigint[], ${done.deliveries}::int[]) AS k(id, deliveries)
      WHERE q.id = k.id AND q.deliveries = k.deliveries
      RETURNING q.id)`);
    results.push(sql`SELECT id, NULL::text AS queue FROM done`);
  }
  if (retry.id.length) {
    parts.push(sql`retried AS (
      UPDATE queue_messages q SET available_at = r.at, lease_owner = NULL, leased_until = NULL, last_error = r.error
      FROM unnest(${retry.id}::bigint[], ${retry.deliveries}::int[], ${retry.at}::timestamp(3)[], ${retry.error}::text[])
        AS r(id, deliveries, at, error)
      WHERE q.id = r.id AND q.deliveries = r.deliveries
      RETURNING q.id)`);
    results.push(sql`SELECT id, NULL::text AS queue FROM retried`);
  }
  if (redeliver.id.length) {
    parts.push(sql`redelivered AS (
      UPDATE queue_messages q SET lease_owner = NULL, leased_until = NULL, available_at = ${new Date(0)}::timestamp(3)
      FROM unnest(${redeliver.id}::bigint[], ${redeliver.deliveries}::int[]) AS k(id, deliveries)
      WHERE q.id = k.id AND q.deliveries = k.deliveries
      RETURNING q.id)`);
    results.push(sql`SELECT id, NULL::text AS queue FROM redelivered`);
  }
  if (defer.commandId.length) {
    parts.push(sql`deferred AS (
      INSERT INTO deferred_commands (command_id, queue, envelope, deferred_at)
      SELECT d.command_id, d.queue, d.envelope::jsonb, ${new Date()}::timestamp(3)
      FROM unnest(${defer.commandId}::text[], ${defer.queue}::text[], ${defer.envelope}::text[]) AS d(command_id, queue, envelope)
      ON CONFLICT (command_id) DO UPDATE SET envelope = EXCLUDED.envelope)`);
  }
  if (dead.queue.length) {
    const now = deps.now();
    const expiresAt = new Date(now.getTime() + deps.config.queues.messageRetentionSeconds * 1000);
    parts.push(sql`dead AS (
      INSERT INTO queue_messages (queue, command_id, command_type, project_id, change_id, task_id, envelope,
        available_at, enqueued_at, expires_at, origin_queue, last_error, deliveries)
      SELECT d.queue, d.command_id, d.command_type, d.project_id, d.change_id, d.task_id, d.envelope::jsonb,
        ${now}::timestamp(3), ${now}::timestamp(3), ${expiresAt}::timestamp(3), d.origin, d.error, 0
      FROM unnest(${dead.queue}::text[], ${dead.commandId}::text[], ${dead.commandType}::text[],
        ${dead.projectId}::text[], ${dead.changeId}::text[], ${dead.taskId}::text[], ${dead.envelope}::text[],
        ${dead.origin}::text[], ${dead.error}::text[])
        AS d(queue, command_id, command_type, project_id, change_id, task_id, envelope, origin, error)
      ON CONFLICT (queue, command_id) DO NOTHING
      RETURNING queue)`);
    // A dead-letter queue that got a message is nudged.
    results.push(sql`SELECT DISTINCT NULL::bigint AS id, queue FROM dead`);
  }
  const rows = await ctx.tx.$queryRaw<{ id: bigint | null; queue: string | null }[]>`
    WITH ${join(parts, ", ")} ${join(results, " UNION ALL ")}`;
  const mine = new Set<bigint>();
  for (const r of rows) {
    if (r.id !== null) mine.add(r.id);
    if (r.queue !== null) nudge.add(r.queue);
  }
  const lost = settled.map(({ m }) => m.id).filter((id) => !mine.has(id));
  if (lost.length) throw new LeaseLost(lost);
  for (const q of nudge) await deps.nudger.nudge(ctx, queueChannel(q as QueuePurpose));
  for (const [fields, message] of logs) deps.log?.(fields, message);
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
