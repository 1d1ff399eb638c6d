import { DomainError, type EventEnvelope, type RhumbatronConfig, streamIndex } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import type { Nudger } from "../nudge.ts";
import { type TxContext, withTransaction } from "../transaction.ts";

/**
 * The transactional outbox (ARCHITECTURE.md: The walk of one Change). A state change and its Events
 * commit in one transaction, through one of two owners:
 *  - project root: project-wide facts; locks the project row;
 *  - resource shard: everything else; locks the row of the resource it owns (e.g. `change:<id>`).
 * A repeated event_id is ignored, so a retried step that writes the same Event again changes nothing.
 */

export interface OutboxDeps {
  config: RhumbatronConfig;
  nudger: Nudger;
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
 * Writes Events to the outbox inside the caller's transaction and nudges the publisher (delivered
 * on commit). Returns the IDs that were new; repeats are ignored. Each project's sequence number is
 * taken last and holds that project's head row until commit, so sequence order is commit order.
 */
export async function appendToOutbox(
  ctx: TxContext,
  events: readonly EventEnvelope[],
  deps: OutboxDeps,
): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map((e) => e.eventId);
  if (new Set(ids).size !== ids.length)
    throw new DomainError("INVALID_INPUT", "the same event_id appears twice in one write");
  const existing = await ctx.tx.outboxRow.findMany({ where: { eventId: { in: ids } }, select: { eventId: true } });
  const seen = new Set(existing.map((r) => r.eventId));
  const fresh = events.filter((e) => !seen.has(e.eventId));
  if (fresh.length === 0) return [];

  const byProject = new Map<string, EventEnvelope[]>();
  for (const e of fresh) byProject.set(e.projectId, [...(byProject.get(e.projectId) ?? []), e]);
  const written: string[] = [];
  // Lock heads in a fixed order so two writers touching the same projects cannot deadlock.
  for (const projectId of [...byProject.keys()].sort()) {
    const list = byProject.get(projectId) ?? [];
    const head = await ctx.tx.$queryRaw<{ last_seq: bigint }[]>`
      INSERT INTO outbox_heads (project_id, last_seq) VALUES (${projectId}, ${list.length})
      ON CONFLICT (project_id) DO UPDATE SET last_seq = outbox_heads.last_seq + ${list.length}
      RETURNING last_seq`;
    const last = head[0]?.last_seq ?? BigInt(list.length);
    const stream = streamIndex(projectId, deps.config.streams.count);
    for (const [i, e] of list.entries()) {
      const seq = last - BigInt(list.length - 1 - i);
      const inserted = await ctx.tx.$executeRaw`
        INSERT INTO outbox (event_id, project_id, project_seq, stream_index, event_type, envelope)
        VALUES (${e.eventId}, ${projectId}, ${seq}, ${stream}, ${e.eventType}, ${JSON.stringify(e)}::jsonb)
        ON CONFLICT (event_id) DO NOTHING`;
      if (inserted > 0) written.push(e.eventId);
    }
  }
  if (written.length > 0) await deps.nudger.nudge(ctx, OUTBOX_NUDGE_CHANNEL);
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
