import { DomainError, type EventEnvelope } from "@rhumbatron/core";
import {
  firstNudgeInTransaction,
  OUTBOX_NUDGE_CHANNEL,
  type OutboxDeps,
  outboxAppendSql,
  outboxInputJson,
  outboxNotifyChannel,
} from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { Prisma } from "../generated/prisma/client.ts";
import type { AfterCommit, TxContext } from "../transaction.ts";

/**
 * A domain write in one statement: the state change of one row owned by a Change (the Change itself,
 * one of its Tasks or Candidates) and its Events, when the row is in the expected state. The
 * statement locks the owning Change's row first (as withResourceShard does, so it serialises with
 * every other write of the shard and takes its locks in the same order), moves the row only if
 * every `expect` column holds, and only then appends the Events to the outbox (outboxAppendSql:
 * dedupe, head, consecutive sequence) and notifies the publisher. Outside a transaction it is one
 * round trip and commits by itself; inside one (a TxContext) it is one statement of it.
 *
 * When the row is not in the expected state nothing is written and the result says so
 * (`applied: false`, with the row as the statement read it); `conflictError` turns that into the
 * DomainError CONFLICT. A missing row or owner is NOT_FOUND. Events are passed built: a Change's
 * tenant and project never change, so the caller builds them from what it already read.
 */

type ColumnType = "text" | "boolean" | "integer" | "timestamp" | "jsonb" | "TaskState";
type ValueOf<T> = T extends "boolean"
  ? boolean
  : T extends "integer"
    ? number
    : T extends "timestamp"
      ? Date | null
      : T extends "jsonb"
        ? unknown
        : string | null;

/** The rows a domain write may move, the columns it may set or expect, and their SQL types. */
const OWNED_ROWS = {
  changes: {
    owner: "id",
    touch: null,
    columns: {
      status: "text",
      title: "text",
      description: "text",
      land_when_ready: "boolean",
      landing_since: "timestamp",
    },
  },
  tasks: {
    owner: "change_id",
    touch: "updated_at",
    columns: {
      state: "TaskState",
      agent_id: "text",
      dispatched: "boolean",
      blocked_limit: "text",
      blocked_cause: "text",
      attempt: "integer",
    },
  },
  candidates: {
    owner: "change_id",
    touch: "updated_at",
    columns: {
      status: "text",
      rejection_reason: "text",
      composed_commit: "text",
      composed_tree: "text",
      plan: "jsonb",
      gate: "jsonb",
      approval_required: "boolean",
    },
  },
} as const satisfies Record<string, { owner: string; touch: string | null; columns: Record<string, ColumnType> }>;

export type OwnedTable = keyof typeof OWNED_ROWS;
type Columns<T extends OwnedTable> = (typeof OWNED_ROWS)[T]["columns"];
/** New values of a row's columns (snake_case, as in the table). */
export type OwnedSet<T extends OwnedTable> = { [C in keyof Columns<T>]?: ValueOf<Columns<T>[C]> };
/** The state the row must be in: a column's value, or any of a list of values. */
export type OwnedExpect<T extends OwnedTable> = {
  [C in keyof Columns<T>]?: ValueOf<Columns<T>[C]> | readonly ValueOf<Columns<T>[C]>[];
};

export interface DomainWriteSpec<T extends OwnedTable> {
  table: T;
  id: string;
  /** The owning Change (the resource shard `change:<id>`) and its project, which every Event must name. */
  changeId: string;
  projectId: string;
  expect: OwnedExpect<T>;
  set: OwnedSet<T>;
  events: readonly EventEnvelope[];
}

export type DomainWriteResult =
  | { applied: true; row: Record<string, unknown>; eventIds: string[] }
  | { applied: false; current: Record<string, unknown> };

/** The DomainError for a write whose row was not in the expected state. */
export function conflictError(intended: { table: string; id: string }, current: Record<string, unknown>): DomainError {
  return new DomainError(
    "CONFLICT",
    `${intended.table} ${intended.id} is not in the expected state; nothing was written`,
    {
      current,
    },
  );
}

const cast = (type: ColumnType) =>
  Prisma.raw(type === "TaskState" ? `"TaskState"` : type === "timestamp" ? "timestamp(3)" : type);

function param(type: ColumnType, value: unknown): Prisma.Sql {
  const v = type === "jsonb" ? (value === null || value === undefined ? null : JSON.stringify(value)) : value;
  return Prisma.sql`${v}::${cast(type)}`;
}

function columnsOf<T extends OwnedTable>(table: T, values: object): [string, ColumnType, unknown][] {
  const known = OWNED_ROWS[table].columns as Record<string, ColumnType>;
  return Object.entries(values)
    .filter(([, v]) => v !== undefined)
    .map(([c, v]) => {
      const type = known[c];
      if (!type) throw new DomainError("INVALID_INPUT", `${table}.${c} cannot be written by a domain write`);
      return [c, type, v];
    });
}

export async function domainWrite<T extends OwnedTable>(
  on: Db | TxContext,
  intended: DomainWriteSpec<T>,
  deps: OutboxDeps,
): Promise<DomainWriteResult> {
  const def = OWNED_ROWS[intended.table];
  if (!def) throw new DomainError("INVALID_INPUT", `unknown table ${intended.table}`);
  if (intended.table === "changes" && intended.id !== intended.changeId)
    throw new DomainError("INVALID_INPUT", "a write of a Change is owned by that Change");
  if (intended.events.some((e) => e.projectId !== intended.projectId))
    throw new DomainError("INVALID_INPUT", `every Event of the write must belong to project ${intended.projectId}`);
  const sets = columnsOf(intended.table, intended.set);
  if (sets.length === 0) throw new DomainError("INVALID_INPUT", "a domain write sets at least one column");
  const json = outboxInputJson(intended.events, deps.config);
  const notify = outboxNotifyChannel(deps.nudger);

  const table = Prisma.raw(intended.table);
  const assignments = Prisma.join(
    [
      ...sets.map(([c, type, v]) => Prisma.sql`${Prisma.raw(c)} = ${param(type, v)}`),
      ...(def.touch ? [Prisma.sql`${Prisma.raw(def.touch)} = (now() AT TIME ZONE 'UTC')`] : []),
    ],
    ", ",
  );
  const guards = columnsOf(intended.table, intended.expect).map(([c, type, v]) =>
    Array.isArray(v)
      ? Prisma.sql`t.${Prisma.raw(c)}::text = ANY(${v.map((x) => (x === null ? null : String(x)))}::text[])`
      : Prisma.sql`t.${Prisma.raw(c)} IS NOT DISTINCT FROM ${param(type, v)}`,
  );
  const rows = await (isTx(on) ? on.tx : on).$queryRaw<
    {
      owners: number;
      row: Record<string, unknown> | null;
      current: Record<string, unknown> | null;
      written_ids: string[];
    }[]
  >`
    WITH owner AS (
      SELECT c.id FROM changes c WHERE c.id = ${intended.changeId} AND c.project_id = ${intended.projectId} FOR UPDATE
    ),
    moved AS (
      UPDATE ${table} t SET ${assignments}
      FROM owner
      WHERE t.id = ${intended.id} AND t.${Prisma.raw(def.owner)} = owner.id
        ${guards.length ? Prisma.sql`AND ${Prisma.join(guards, " AND ")}` : Prisma.empty}
      RETURNING to_jsonb(t.*) AS row
    ),
    result AS (SELECT (SELECT count(*) FROM owner)::int AS owners, (SELECT row FROM moved) AS row)
    SELECT result.owners, result.row,
      CASE WHEN result.row IS NULL
        THEN (SELECT to_jsonb(x.*) FROM ${table} x WHERE x.id = ${intended.id} AND x.${Prisma.raw(def.owner)} = ${intended.changeId})
      END AS current,
      CASE WHEN result.row IS NOT NULL THEN ${outboxAppendSql(json, notify)} ELSE '{}'::text[] END AS written_ids
    FROM result`;
  const r = rows[0];
  if (!r || r.owners === 0) throw new DomainError("NOT_FOUND", `change ${intended.changeId} not found`);
  if (r.row) {
    const eventIds = r.written_ids ?? [];
    if (eventIds.length > 0 && notify === null) await nudgeAfter(on, deps);
    return { applied: true, row: r.row, eventIds };
  }
  if (!r.current) throw new DomainError("NOT_FOUND", `${intended.table} ${intended.id} not found`);
  return { applied: false, current: r.current };
}

function isTx(on: Db | TxContext): on is TxContext {
  return "tx" in on && "afterCommit" in on;
}

/** A nudger that is not inStatement: inside a transaction once per transaction; outside, the statement committed already. */
async function nudgeAfter(on: Db | TxContext, deps: OutboxDeps) {
  if (isTx(on)) {
    if (firstNudgeInTransaction(on, OUTBOX_NUDGE_CHANNEL)) await deps.nudger.nudge(on, OUTBOX_NUDGE_CHANNEL);
    return;
  }
  const hooks: AfterCommit[] = [];
  await deps.nudger.nudge({ tx: on, afterCommit: (h) => hooks.push(h) }, OUTBOX_NUDGE_CHANNEL);
  // Best effort, as after a transaction: a lost nudge only waits for the publisher's cron.
  for (const h of hooks) await Promise.resolve(h()).catch(() => {});
}
