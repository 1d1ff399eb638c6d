import { DomainError, type EventEnvelope, type RhumbatronConfig, streamIndex } from "@rhumbatron/core";
import { firstNudgeInTransaction, type Nudger, pgNudgeChannel } from "../nudge.ts";
import { type Sql, sql } from "../sql.ts";
import type { TxContext } from "../transaction.ts";

/**
 * The transactional outbox (docs/protocol.md, The transactional outbox): Events are written in the
 * transaction of the state change that makes them, and the publisher moves them to the streams. Who
 * owns a write (which row it locks) is the domain's: packages/db's events/owners.ts.
 * A repeated event_id is ignored, so a retried step that writes the same Event again changes nothing.
 */

export interface OutboxDeps {
  config: RhumbatronConfig;
  nudger: Nudger;
}

/** What a state change that writes Events needs: the outbox's deps and the clock. */
export interface StateDeps extends OutboxDeps {
  now: () => Date;
}

/** Channel the publisher listens on. */
export const OUTBOX_NUDGE_CHANNEL = "outbox";

/**
 * The outbox half of a write as one SQL expression: rhumbatron_append_outbox (migration
 * 20261202170000_outbox_append_function), a function so that its statements are planned once per
 * connection. It skips event_ids already in the outbox (a repeat is ignored); advances each
 * project's head by its number of fresh Events, upserting the heads in project order, so two writers
 * cannot deadlock, and holding them until commit, so sequence order is commit order; inserts the
 * fresh rows with consecutive project_seq ending at the new head; pg_notifies `notify` when it wrote
 * something; and yields the IDs written (text[]), in sequence order. A concurrent writer of the same
 * event_id that commits first makes the insert skip the row (ON CONFLICT), as before: the Event is in
 * the outbox once, its project's sequence has a gap.
 */
export function outboxAppendSql(json: string, notify: string | null): Sql {
  return sql`rhumbatron_append_outbox(${json}::jsonb, ${notify}::text)`;
}

/** The Events of one write as one jsonb parameter: [{e: envelope, s: stream index}, …]. */
export function outboxInputJson(events: readonly EventEnvelope[], config: RhumbatronConfig): string {
  const ids = events.map((e) => e.eventId);
  if (new Set(ids).size !== ids.length)
    throw new DomainError("INVALID_INPUT", "the same event_id appears twice in one write");
  return JSON.stringify(events.map((e) => ({ e, s: streamIndex(e.projectId, config.streams.count) })));
}

/**
 * Whether a statement should carry the publisher's nudge itself (an `inStatement` nudger: its
 * pg_notify rides along, delivered on commit), else the channel to nudge through the nudger after
 * the statement wrote something, once per transaction.
 */
export function outboxNotifyChannel(nudger: Nudger): string | null {
  return nudger.inStatement ? pgNudgeChannel(OUTBOX_NUDGE_CHANNEL) : null;
}

/**
 * Writes Events to the outbox inside the caller's transaction and nudges the publisher (delivered
 * on commit). Returns the IDs that were new; repeats are ignored. Each project's sequence number is
 * taken last and holds that project's head row until commit, so sequence order is commit order.
 * One statement (outboxAppendSql): dedupe, heads, rows and, for a pg_notify nudger, the nudge.
 */
export async function appendToOutbox(
  ctx: TxContext,
  events: readonly EventEnvelope[],
  deps: OutboxDeps,
): Promise<string[]> {
  if (events.length === 0) return [];
  const json = outboxInputJson(events, deps.config);
  const notify = outboxNotifyChannel(deps.nudger);
  const rows = await ctx.tx.$queryRaw<{ written_ids: string[] }[]>`
    SELECT ${outboxAppendSql(json, notify)} AS written_ids`;
  const written = rows[0]?.written_ids ?? [];
  if (written.length > 0 && notify === null && firstNudgeInTransaction(ctx, OUTBOX_NUDGE_CHANNEL))
    await deps.nudger.nudge(ctx, OUTBOX_NUDGE_CHANNEL);
  return written;
}
