import { DomainError, type EventEnvelope, type RhumbatronConfig, streamIndex } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { Prisma } from "../generated/prisma/client.ts";
import { firstNudgeInTransaction, type Nudger, pgNudgeChannel } from "../nudge.ts";
import { type TxContext, withTransaction } from "../transaction.ts";

/**
 * The transactional outbox (ARCHITECTURE.md, The walk of one Change; docs/protocol.md, The transactional outbox). A state change and its Events
 * commit in one transaction, through one of two owners:
 *  - project root: project-wide facts; locks the project row;
 *  - resource shard: everything else; locks the row of the resource it owns (e.g. `change:<id>`).
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

export interface LockedProject {
  id: string;
  tenantId: string;
  canonicalGeneration: number;
}

export interface LockedChange {
  id: string;
  projectId: string;
  tenantId: string;
  canonicalGeneration: number;
}

export async function lockProjectRow(ctx: TxContext, projectId: string): Promise<LockedProject> {
  const rows = await ctx.tx.$queryRaw<{ id: string; tenant_id: string; canonical_generation: number }[]>`
    SELECT id, tenant_id, canonical_generation FROM projects WHERE id = ${projectId} FOR UPDATE`;
  const row = rows[0];
  if (!row) throw new DomainError("NOT_FOUND", `project ${projectId} not found`);
  return { id: row.id, tenantId: row.tenant_id, canonicalGeneration: row.canonical_generation };
}

/** Locks the resource a shard owns. Resources are written `<kind>:<id>`; changes are the first kind. */
export async function lockResourceRow(ctx: TxContext, resource: string): Promise<LockedChange> {
  const [kind, id] = resource.split(/:(.*)/s, 2);
  if (kind !== "change" || !id) throw new DomainError("INVALID_INPUT", `unknown resource ${resource}`);
  const rows = await ctx.tx.$queryRaw<
    { id: string; project_id: string; tenant_id: string; canonical_generation: number }[]
  >`
    SELECT c.id, c.project_id, p.tenant_id, p.canonical_generation
    FROM changes c JOIN projects p ON p.id = c.project_id
    WHERE c.id = ${id} FOR UPDATE OF c`;
  const row = rows[0];
  if (!row) throw new DomainError("NOT_FOUND", `${resource} not found`);
  return {
    id: row.id,
    projectId: row.project_id,
    tenantId: row.tenant_id,
    canonicalGeneration: row.canonical_generation,
  };
}

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
export function outboxAppendSql(json: string, notify: string | null): Prisma.Sql {
  return Prisma.sql`rhumbatron_append_outbox(${json}::jsonb, ${notify}::text)`;
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

export interface OwnedWrite<T> {
  result: T;
  events: EventEnvelope[];
}

/** One transaction owned by the project root: lock the project, decide and write, append Events. */
export async function withProjectRoot<T>(
  db: Db,
  projectId: string,
  deps: OutboxDeps,
  fn: (ctx: TxContext, project: LockedProject) => Promise<OwnedWrite<T>>,
): Promise<T> {
  return withTransaction(db, async (ctx) => {
    const project = await lockProjectRow(ctx, projectId);
    const { result, events } = await fn(ctx, project);
    await appendToOutbox(ctx, events, deps);
    return result;
  });
}

/** One transaction owned by a resource shard (e.g. `change:<id>`): lock it, decide and write, append Events. */
export async function withResourceShard<T>(
  db: Db,
  resource: string,
  deps: OutboxDeps,
  fn: (ctx: TxContext, owner: LockedChange) => Promise<OwnedWrite<T>>,
): Promise<T> {
  return withTransaction(db, async (ctx) => {
    const owner = await lockResourceRow(ctx, resource);
    const { result, events } = await fn(ctx, owner);
    await appendToOutbox(ctx, events, deps);
    return result;
  });
}
