import { type OutboxRowState, type RhumbatronConfig, transitionOutbox } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import type { Nudger } from "../nudge.ts";
import { type Tx, withTransaction } from "../transaction.ts";
import { ANALYTICS_CHANNEL } from "./analytics.ts";
import type { StreamSink } from "./stream.ts";

/**
 * The outbox publisher (publishDue). Per project and run: at most
 * config.outbox.maxRowsPerProjectPerPublish rows, sent in commit order to the project's stream.
 * A row waiting for its retry holds back the later rows of its project (head-of-line, like a
 * partition); a failed row is final and does not. One publisher per project at a time.
 */

export interface PublisherDeps {
  config: RhumbatronConfig;
  sink: StreamSink;
  nudger: Nudger;
  now: () => Date;
}

export interface ProjectPublishResult {
  projectId: string;
  published: number;
  failedSend: boolean;
  heldBack: boolean;
  failedRows: number;
  stream: number | null;
  skippedBusy: boolean;
}

/** The event router's nudge channel; the payload names the stream, so each stream runs on its own. */
export const EVENT_ROUTER_CHANNEL = "event_router";

interface Row {
  id: bigint;
  event_id: string;
  project_id: string;
  stream_index: number;
  event_type: string;
  envelope: unknown;
  state: OutboxRowState["state"];
  attempts: number;
  next_attempt_at: Date | null;
  last_error: string | null;
}

const asState = (r: Row): OutboxRowState => ({
  state: r.state,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastError: r.last_error,
});

/** Projects with rows to publish now (pending, or retry_wait and due), oldest first. */
export async function projectsWithDueRows(db: Db, now: Date, limit: number): Promise<string[]> {
  const rows = await db.$queryRaw<{ project_id: string }[]>`
    SELECT project_id FROM outbox
    WHERE state = 'pending' OR (state = 'retry_wait' AND next_attempt_at <= ${now})
    GROUP BY project_id ORDER BY min(id) LIMIT ${limit}`;
  return rows.map((r) => r.project_id);
}

async function saveState(tx: Tx, id: bigint, s: OutboxRowState, publishedAt: Date | null) {
  await tx.$executeRaw`
    UPDATE outbox SET state = ${s.state}::"OutboxState", attempts = ${s.attempts}, next_attempt_at = ${s.nextAttemptAt},
      last_error = ${s.lastError}, published_at = ${publishedAt}
    WHERE id = ${id}`;
}

export async function publishProject(db: Db, projectId: string, deps: PublisherDeps): Promise<ProjectPublishResult> {
  const result: ProjectPublishResult = {
    projectId,
    published: 0,
    failedSend: false,
    heldBack: false,
    failedRows: 0,
    stream: null,
    skippedBusy: false,
  };
  await withTransaction(db, async (ctx) => {
    const { tx } = ctx;
    // Single flight per project without touching the rows writers lock (outbox_heads).
    const lock = await tx.$queryRaw<
      { ok: boolean }[]
    >`SELECT pg_try_advisory_xact_lock(hashtext('outbox:' || ${projectId})) AS ok`;
    if (!lock[0]?.ok) {
      result.skippedBusy = true;
      return;
    }
    const rows = await tx.$queryRaw<Row[]>`
      SELECT id, event_id, project_id, stream_index, event_type, envelope, state, attempts, next_attempt_at, last_error
      FROM outbox WHERE project_id = ${projectId} AND state IN ('pending', 'retry_wait')
      ORDER BY project_seq LIMIT ${deps.config.outbox.maxRowsPerProjectPerPublish}
      FOR UPDATE SKIP LOCKED`;
    const now = deps.now();
    const toSend: Row[] = [];
    for (const row of rows) {
      let state = asState(row);
      if (row.stream_index >= deps.config.streams.count) {
        await saveState(
          tx,
          row.id,
          transitionOutbox(state, { kind: "no_binding", stream: row.stream_index }, now, deps.config.outbox),
          null,
        );
        result.failedRows++;
        continue;
      }
      if (state.state === "retry_wait") {
        if (!state.nextAttemptAt || state.nextAttemptAt.getTime() > now.getTime()) {
          result.heldBack = true;
          break;
        }
        state = transitionOutbox(state, { kind: "due" }, now, deps.config.outbox);
        row.state = state.state;
      }
      toSend.push(row);
    }
    const first = toSend[0];
    if (!first) return;
    const stream = first.stream_index;
    result.stream = stream;
    await tx.$executeRaw`SAVEPOINT publish_send`;
    try {
      await deps.sink.append(
        tx,
        stream,
        toSend.map((r) => ({
          eventId: r.event_id,
          projectId: r.project_id,
          eventType: r.event_type,
          envelope: r.envelope,
        })),
        now,
      );
      await tx.$executeRaw`RELEASE SAVEPOINT publish_send`;
    } catch (err) {
      await tx.$executeRaw`ROLLBACK TO SAVEPOINT publish_send`;
      const message = err instanceof Error ? err.message : String(err);
      const next = transitionOutbox(asState(first), { kind: "send_failed", error: message }, now, deps.config.outbox);
      await saveState(tx, first.id, next, null);
      result.failedSend = true;
      if (next.state === "failed") result.failedRows++;
      return;
    }
    const ids = toSend.map((r) => r.id);
    await tx.$executeRaw`
      UPDATE outbox SET state = 'published', published_at = ${now}, next_attempt_at = NULL WHERE id = ANY(${ids})`;
    result.published = toSend.length;
    // Best effort: wake the event router and the analytics projector for this stream once the
    // entries are visible (each has a cron backstop for a lost nudge).
    await deps.nudger.nudge(ctx, EVENT_ROUTER_CHANNEL, String(stream));
    await deps.nudger.nudge(ctx, ANALYTICS_CHANNEL, String(stream));
  });
  return result;
}

export interface PublishDueResult {
  projects: ProjectPublishResult[];
  published: number;
}

/** One publisher run: every project with due rows, each up to its per-run limit. */
export async function publishDue(
  db: Db,
  deps: PublisherDeps,
  options: { maxProjects?: number } = {},
): Promise<PublishDueResult> {
  const projects = await projectsWithDueRows(db, deps.now(), options.maxProjects ?? 1000);
  const results: ProjectPublishResult[] = [];
  for (const p of projects) results.push(await publishProject(db, p, deps));
  return { projects: results, published: results.reduce((n, r) => n + r.published, 0) };
}
