import type { EventEnvelope } from "@rhumbatron/core";
import { DomainError } from "@rhumbatron/core";
import { appendToOutbox, type OutboxDeps } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { type TxContext, withTransaction } from "../transaction.ts";

/**
 * Who owns a write. A state change and its Events commit in one transaction, through one of two
 * owners:
 *  - project root: project-wide facts; locks the project row;
 *  - resource shard: everything else; locks the row of the resource it owns (e.g. `change:<id>`).
 */

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
