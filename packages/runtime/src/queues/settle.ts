import { commandEnvelopeSchema, type DeliveryAction, type QueuePurpose } from "@rhumbatron/core";
import { join, type Sql, sql } from "../sql.ts";
import type { TxContext } from "../transaction.ts";
import type { LeasedMessage, QueueConsumerDeps } from "./consumer-types.ts";
import { queueChannel } from "./enqueue.ts";

/** What a delivery decided for one message; a batch's decisions are written together (settle). */
export interface Settlement {
  m: LeasedMessage;
  a: DeliveryAction;
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
export async function settle(ctx: TxContext, settled: readonly Settlement[], deps: QueueConsumerDeps): Promise<void> {
  if (settled.length === 0) return;
  const b = sortSettlements(settled, deps);
  const { parts, results } = settleParts(b, deps);
  const rows = await ctx.tx.$queryRaw<{ id: bigint | null; queue: string | null }[]>`
    WITH ${join(parts, ", ")} ${join(results, " UNION ALL ")}`;
  const mine = new Set<bigint>();
  for (const r of rows) {
    if (r.id !== null) mine.add(r.id);
    if (r.queue !== null) b.nudge.add(r.queue);
  }
  const lost = settled.map(({ m }) => m.id).filter((id) => !mine.has(id));
  if (lost.length) throw new LeaseLost(lost);
  for (const q of b.nudge) await deps.nudger.nudge(ctx, queueChannel(q as QueuePurpose));
  for (const [fields, message] of b.logs) deps.log?.(fields, message);
}

/** A batch's decisions, sorted by what the settling statement does with each message. */
interface Buckets {
  done: { id: bigint[]; deliveries: number[] };
  redeliver: { id: bigint[]; deliveries: number[] };
  retry: { id: bigint[]; deliveries: number[]; at: Date[]; error: string[] };
  defer: { commandId: string[]; queue: string[]; envelope: string[] };
  dead: DeadLetters;
  /** The queues to nudge once the batch is settled. */
  nudge: Set<string>;
  /** What to log once the batch is settled: fields and message. */
  logs: [Record<string, unknown>, string][];
}

interface DeadLetters {
  queue: string[];
  commandId: string[];
  commandType: string[];
  projectId: string[];
  changeId: (string | null)[];
  taskId: (string | null)[];
  envelope: string[];
  origin: string[];
  error: string[];
}

function emptyBuckets(): Buckets {
  return {
    done: { id: [], deliveries: [] },
    redeliver: { id: [], deliveries: [] },
    retry: { id: [], deliveries: [], at: [], error: [] },
    defer: { commandId: [], queue: [], envelope: [] },
    dead: {
      queue: [],
      commandId: [],
      commandType: [],
      projectId: [],
      changeId: [],
      taskId: [],
      envelope: [],
      origin: [],
      error: [],
    },
    nudge: new Set<string>(),
    logs: [],
  };
}

/** Sorts each message of the batch into its bucket, with the nudges and log lines it asks for. */
function sortSettlements(settled: readonly Settlement[], deps: QueueConsumerDeps): Buckets {
  const b = emptyBuckets();
  const { done, redeliver, retry, defer, nudge, logs } = b;
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
      case "dead_letter":
        finish(m);
        addDeadLetter(b, m, a.error, deps);
        break;
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
  return b;
}

/** A dead-lettered message goes on its dead-letter queue; a malformed one is dropped and logged. */
function addDeadLetter(b: Buckets, m: LeasedMessage, error: string, deps: QueueConsumerDeps): void {
  const { dead, logs } = b;
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
    dead.error.push(error);
  } else {
    logs.push([{ commandId: m.commandId, queue: m.queue, error }, "malformed command dropped"]);
  }
  logs.push([{ commandId: m.commandId, queue: m.queue, deliveries: m.deliveries, error }, "command dead-lettered"]);
}

/**
 * The settling statement's parts, one per bucket that has messages: `parts` its CTEs, `results`
 * the SELECTs of the ids settled and the queues to nudge.
 */
function settleParts(b: Buckets, deps: QueueConsumerDeps): { parts: Sql[]; results: Sql[] } {
  const { done, redeliver, retry, defer, dead } = b;
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
  return { parts, results };
}
