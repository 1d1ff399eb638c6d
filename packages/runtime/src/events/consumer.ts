import {
  type AnyEventEnvelope,
  type BatchOutcome,
  batchKey,
  type DecodeError,
  decideBatchOutcome,
  decodeEvent,
  type RhumbatronConfig,
} from "@rhumbatron/core";
import { heldByDeadWorker, takeoverCutoff } from "../leases/holders.ts";
import type { SqlDatabase as Db, SqlClient } from "../sql.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { readStream, type StreamEntryRow } from "./stream.ts";

/**
 * A pull consumer of one stream (docs/workflows.md). Per (subscription, stream) one consumer runs
 * at a time, by a lease on the cursor row. Each delivery reads one batch after the cursor, decodes
 * it, and applies the fresh events in groups. A group claims its events in `processed_events` and
 * applies them in ONE transaction, so a crash or a throw after the claim rolls the claim back too
 * and the redelivery applies the events exactly once. Then: all applied -> ack (advance the
 * cursor); otherwise count a batch failure and nack, or on the 5th failure dead-letter the batch,
 * mark its events processed, and ack.
 */

export interface DeliveredEvent {
  offset: bigint;
  entry: StreamEntryRow;
  event: AnyEventEnvelope;
}

export interface Subscription {
  /** Consumer name, also the dedupe namespace in processed_events. */
  name: string;
  /**
   * Splits a batch's decoded events into apply groups (in order). Groups past `maxGroups` wait
   * for the next delivery; the cursor stops before the first event they hold.
   */
  group(events: DeliveredEvent[]): DeliveredEvent[][];
  maxGroups?: number;
  /**
   * Slow outside work for a group (a model call), done before its transaction opens so no lock is
   * held while it waits; gets the group's events not yet applied, and its result is given to apply.
   * It may run again for the same events (a crash before apply commits), so it must be safe to repeat.
   */
  prepare?(db: Db, events: DeliveredEvent[]): Promise<unknown>;
  /** Applies fresh events inside the claiming transaction; throw to leave them unapplied. */
  apply(ctx: TxContext, events: DeliveredEvent[], prepared?: unknown): Promise<void>;
}

export interface ConsumerDeps {
  config: RhumbatronConfig;
  now: () => Date;
  /** Identifies this consumer process in the lease. */
  owner: string;
}

export type ConsumeOutcome = "busy" | "held" | "empty" | BatchOutcome;

export interface ConsumeResult {
  outcome: ConsumeOutcome;
  stream: number;
  delivered: number;
  applied: number;
  duplicates: number;
  undecodable: number;
  deferred: number;
  failures?: number;
  error?: string;
}

/**
 * Takes the cursor's lease in one statement, and only when there is something to do: entries after
 * the cursor, or a batch waiting for its redelivery. A new cursor row is created on its first lease.
 * When no lease was taken, a second read tells "busy" (another live holder) from "empty".
 */
async function lease(
  db: Db,
  sub: string,
  stream: number,
  deps: ConsumerDeps,
): Promise<{ committed_offset: bigint; redeliver_at: Date | null } | "busy" | "empty"> {
  const now = deps.now();
  const until = new Date(now.getTime() + deps.config.eventRouter.cursorLeaseSeconds * 1000);
  const deadHolder = heldByDeadWorker(
    "c.lease_owner",
    takeoverCutoff(now, deps.config.worker.takeoverSeconds),
    deps.owner,
  );
  const rows = await db.$queryRaw<{ committed_offset: bigint; redeliver_at: Date | null }[]>`
    INSERT INTO stream_cursors AS c (subscription, stream_index, lease_owner, leased_until, updated_at)
    SELECT ${sub}, ${stream}, ${deps.owner}, ${until}, ${now}
    WHERE EXISTS (SELECT 1 FROM stream_entries e WHERE e.stream_index = ${stream} AND e."offset" > 0)
    ON CONFLICT (subscription, stream_index) DO UPDATE
      SET lease_owner = EXCLUDED.lease_owner, leased_until = EXCLUDED.leased_until, updated_at = EXCLUDED.updated_at
      WHERE (c.leased_until IS NULL OR c.leased_until < ${now} OR c.lease_owner = ${deps.owner} OR ${deadHolder})
        AND (c.redeliver_at IS NOT NULL OR EXISTS (
          SELECT 1 FROM stream_entries e WHERE e.stream_index = c.stream_index AND e."offset" > c.committed_offset))
    RETURNING c.committed_offset, c.redeliver_at`;
  if (rows[0]) return rows[0];
  const held = await db.$queryRaw<{ busy: boolean }[]>`
    SELECT (c.leased_until >= ${now} AND c.lease_owner <> ${deps.owner} AND NOT ${deadHolder}) AS busy
    FROM stream_cursors c WHERE c.subscription = ${sub} AND c.stream_index = ${stream}`;
  return held[0]?.busy ? "busy" : "empty";
}

async function finish(
  db: Db,
  sub: string,
  stream: number,
  owner: string,
  now: Date,
  set: { offset?: bigint; redeliverAt?: Date | null; clearFailure?: string },
) {
  // An acked batch forgets its failure count in the same statement (one round trip per ack).
  await db.$executeRaw`
    WITH cleared AS (
      DELETE FROM k2_batch_failures WHERE consumer = ${sub} AND batch_key = ${set.clearFailure ?? null}::text)
    UPDATE stream_cursors SET lease_owner = NULL, leased_until = NULL, updated_at = ${now},
      committed_offset = COALESCE(${set.offset ?? null}::bigint, committed_offset),
      redeliver_at = ${set.redeliverAt ?? null}
    WHERE subscription = ${sub} AND stream_index = ${stream} AND lease_owner = ${owner}`;
}

async function markProcessed(ctx: TxContext, consumer: string, eventIds: string[]): Promise<string[]> {
  if (eventIds.length === 0) return [];
  const rows = await ctx.tx.$queryRaw<{ event_id: string }[]>`
    INSERT INTO processed_events (consumer, event_id)
    SELECT ${consumer}, unnest(${eventIds}::text[])
    ON CONFLICT DO NOTHING RETURNING event_id`;
  return rows.map((r) => r.event_id);
}

/** A dead letter for an operator; a second one with the same ID is the same letter and changes nothing. */
async function setAside(
  tx: SqlClient,
  d: {
    id: string;
    kind: "event" | "batch";
    consumer: string;
    projectId: string | null;
    reason: string;
    attempts: number;
    payload: unknown;
  },
) {
  await tx.$executeRaw`
    INSERT INTO dead_letters (id, kind, consumer, project_id, reason, attempts, payload)
    VALUES (${d.id}, ${d.kind}, ${d.consumer}, ${d.projectId}, ${d.reason}, ${d.attempts}, ${JSON.stringify(d.payload)}::jsonb)
    ON CONFLICT (id) DO NOTHING`;
}

function deadLetterId(consumer: string, key: string) {
  return `dl_${consumer}_${key}`.replace(/[^A-Za-z0-9_@.-]/g, "_");
}

/** Dead-letters events that cannot be decoded, one by one, and marks them processed: they never block a batch. */
async function setAsideUndecodable(db: Db, consumer: string, bad: { entry: StreamEntryRow; error: DecodeError }[]) {
  if (bad.length === 0) return;
  await withTransaction(db, async (ctx) => {
    for (const { entry, error } of bad) {
      await setAside(ctx.tx, {
        id: deadLetterId(consumer, `event_${entry.eventId}`),
        kind: "event",
        consumer,
        projectId: entry.projectId,
        reason: `${error.code}: ${error.message}`,
        attempts: 0,
        payload: { stream: entry.streamIndex, offset: entry.offset.toString(), envelope: entry.envelope },
      });
    }
    await markProcessed(
      ctx,
      consumer,
      bad.map((b) => b.entry.eventId),
    );
  });
}

/** One delivery: lease, read one batch, apply, then ack / nack / dead-letter. */
export async function consumeOnce(
  db: Db,
  sub: Subscription,
  stream: number,
  deps: ConsumerDeps,
): Promise<ConsumeResult> {
  const result: ConsumeResult = {
    outcome: "empty",
    stream,
    delivered: 0,
    applied: 0,
    duplicates: 0,
    undecodable: 0,
    deferred: 0,
  };
  const cursor = await lease(db, sub.name, stream, deps);
  if (cursor === "busy" || cursor === "empty") return { ...result, outcome: cursor };
  const start = deps.now();
  if (cursor.redeliver_at && cursor.redeliver_at.getTime() > start.getTime()) {
    await finish(db, sub.name, stream, deps.owner, start, { redeliverAt: cursor.redeliver_at });
    return { ...result, outcome: "held" };
  }
  const entries = await readStream(db, stream, cursor.committed_offset, deps.config.eventRouter.batchSize);
  result.delivered = entries.length;
  const first = entries[0];
  const last = entries.at(-1);
  if (!first || !last) {
    await finish(db, sub.name, stream, deps.owner, start, {});
    return result;
  }
  const decoded = await decodeStep(db, sub, entries, result);
  const { runNow, deferredFrom } = planGroups(sub, decoded, result);
  const { unapplied, lastError } = await applyStep(db, sub, runNow, result);
  const ackOffset = deferredFrom !== null ? deferredFrom - 1n : last.offset;
  const batch = { stream, key: batchKey(stream, first.offset), first: first.offset, last: last.offset };
  const end = deps.now();
  if (unapplied.length === 0) {
    await finish(db, sub.name, stream, deps.owner, end, { offset: ackOffset, clearFailure: batch.key });
    return { ...result, outcome: "ack" };
  }
  return failedBatchStep(db, sub, deps, { ...batch, ackOffset }, { unapplied, lastError }, result);
}

/** Decodes the batch; undecodable entries are set aside (never retried, never lost). */
async function decodeStep(
  db: Db,
  sub: Subscription,
  entries: StreamEntryRow[],
  result: ConsumeResult,
): Promise<DeliveredEvent[]> {
  const decoded: DeliveredEvent[] = [];
  const bad: { entry: StreamEntryRow; error: DecodeError }[] = [];
  for (const entry of entries) {
    const d = decodeEvent(entry.envelope);
    if (d.ok) decoded.push({ offset: entry.offset, entry, event: d.event });
    else bad.push({ entry, error: d.error });
  }
  await setAsideUndecodable(db, sub.name, bad);
  result.undecodable = bad.length;
  return decoded;
}

/** The subscription's groups: the first maxGroups run now, the rest wait (the ack stops before them). */
function planGroups(sub: Subscription, decoded: DeliveredEvent[], result: ConsumeResult) {
  const groups = sub.group(decoded);
  const now = sub.maxGroups ?? groups.length;
  const later = groups.slice(now);
  const deferredFrom = later
    .flat()
    .reduce<bigint | null>((min, e) => (min === null || e.offset < min ? e.offset : min), null);
  result.deferred = later.flat().length;
  return { runNow: groups.slice(0, now), deferredFrom };
}

/**
 * A group's transaction that Postgres chose as a deadlock's victim (40P01) is run again at once, up
 * to DEADLOCK_ATTEMPTS times: it was rolled back whole, and the other side has gone on. Anything else,
 * or a deadlock again and again, fails the group as before (nack, then dead letter).
 */
const DEADLOCK_ATTEMPTS = 4;

export async function retryOnDeadlock<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= DEADLOCK_ATTEMPTS || !isDeadlock(err)) throw err;
    }
  }
}

const isDeadlock = (err: unknown) => err instanceof Error && /\b40P01\b|deadlock detected/.test(err.message);

/** Each group in its own transaction: claim the fresh Events (dedupe), apply them; a failed group is kept. */
/** The group's events this consumer has not applied yet (a read: the claim itself is in apply's transaction). */
async function notYetProcessed(db: Db, consumer: string, group: DeliveredEvent[]): Promise<DeliveredEvent[]> {
  const ids = group.map((e) => e.event.eventId);
  const done = await db.$queryRaw<{ event_id: string }[]>`
    SELECT event_id FROM processed_events WHERE consumer = ${consumer} AND event_id = ANY(${ids})`;
  const seen = new Set(done.map((d) => d.event_id));
  return group.filter((e) => !seen.has(e.event.eventId));
}

async function applyStep(db: Db, sub: Subscription, groups: DeliveredEvent[][], result: ConsumeResult) {
  const unapplied: DeliveredEvent[] = [];
  let lastError: string | undefined;
  for (const group of groups) {
    try {
      const prepared = sub.prepare ? await sub.prepare(db, await notYetProcessed(db, sub.name, group)) : undefined;
      const counts = await retryOnDeadlock(() =>
        withTransaction(db, async (ctx) => {
          const claimed = new Set(
            await markProcessed(
              ctx,
              sub.name,
              group.map((e) => e.event.eventId),
            ),
          );
          const fresh = group.filter((e) => claimed.has(e.event.eventId));
          if (fresh.length > 0) await sub.apply(ctx, fresh, prepared);
          return { duplicates: group.length - fresh.length, applied: fresh.length };
        }),
      );
      result.duplicates += counts.duplicates;
      result.applied += counts.applied;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
      unapplied.push(...group);
    }
  }
  return { unapplied, lastError };
}

/**
 * A batch with unapplied groups: counted per (consumer, batch key); redelivered after a delay until
 * it has failed batchFailuresBeforeDeadLetter times, then dead-lettered (its Events marked
 * processed, so the stream moves on) for an operator to Retry or Dismiss.
 */
async function failedBatchStep(
  db: Db,
  sub: Subscription,
  deps: ConsumerDeps,
  batch: { stream: number; key: string; first: bigint; last: bigint; ackOffset: bigint },
  failed: { unapplied: DeliveredEvent[]; lastError: string | undefined },
  result: ConsumeResult,
): Promise<ConsumeResult> {
  const { unapplied, lastError } = failed;
  const end = deps.now();
  const [failure = { failures: 1 }] = await db.$queryRaw<{ failures: number }[]>`
    INSERT INTO k2_batch_failures (consumer, batch_key, failures, last_error, first_failed_at, last_failed_at)
    VALUES (${sub.name}, ${batch.key}, 1, ${lastError ?? null}, ${end}, ${end})
    ON CONFLICT (consumer, batch_key) DO UPDATE SET failures = k2_batch_failures.failures + 1,
      last_error = EXCLUDED.last_error, last_failed_at = EXCLUDED.last_failed_at
    RETURNING failures`;
  const outcome = decideBatchOutcome(false, failure.failures, deps.config.eventRouter.batchFailuresBeforeDeadLetter);
  if (outcome === "nack") {
    const redeliverAt = new Date(end.getTime() + deps.config.eventRouter.nackDelaySeconds * 1000);
    await finish(db, sub.name, batch.stream, deps.owner, end, { redeliverAt });
    return { ...result, outcome, failures: failure.failures, error: lastError };
  }
  await withTransaction(db, async (ctx) => {
    const id = deadLetterId(sub.name, batch.key);
    await setAside(ctx.tx, {
      id,
      kind: "batch",
      consumer: sub.name,
      projectId: unapplied[0]?.event.projectId ?? null,
      reason: `batch failed ${failure.failures} times: ${lastError ?? "unknown error"}`,
      attempts: failure.failures,
      payload: {
        stream: batch.stream,
        fromOffset: batch.first.toString(),
        toOffset: batch.last.toString(),
        eventIds: unapplied.map((e) => e.event.eventId),
      },
    });
    await markProcessed(
      ctx,
      sub.name,
      unapplied.map((e) => e.event.eventId),
    );
  });
  await finish(db, sub.name, batch.stream, deps.owner, end, { offset: batch.ackOffset });
  return { ...result, outcome: "dead_letter", failures: failure.failures, error: lastError };
}
