import { type OutboxRowState, type RhumbatronConfig, transitionOutbox } from "@rhumbatron/core";
import { type Nudger, pgNudgeChannel } from "../nudge.ts";
import { type Database as Db, type Sql, sql, type SqlClient as Tx } from "../sql.ts";
import { type AfterCommit, type TxContext, withTransaction } from "../transaction.ts";
import { type StreamSink, streamAppendCtes } from "./stream.ts";

/**
 * The outbox publisher (publishDue). Per project and run: at most
 * config.outbox.maxRowsPerProjectPerPublish rows, sent in commit order to the project's stream.
 * A row waiting for its retry holds back the later rows of its project (head-of-line, like a
 * partition); a failed row is final and does not. One publisher per project at a time.
 *
 * Two ways, same rules:
 *  - batched (a sink that is `inStatement`, the Postgres stream store): one statement per run
 *    (publishBatch) takes each project's single-flight lock, claims its due rows, fails the rows
 *    whose stream has no producer binding, appends the rest to their streams, marks them published
 *    and notifies the event router and the analytics projector once per stream. If that statement
 *    fails, nothing of it was written and the run goes the second way, which records the failure;
 *  - one project per transaction (publishProjectRowByRow): the rows are read, sent through
 *    `sink.append` inside a savepoint, and a failed send puts the first row into retry_wait.
 */

export interface PublisherDeps {
  config: RhumbatronConfig;
  sink: StreamSink;
  nudger: Nudger;
  now: () => Date;
  /**
   * Told when the batched statement failed and the run fell back to one project at a time (which
   * records a failed send on the row itself). Nothing is lost either way; this says why it was slow.
   */
  onBatchFailed?: (err: unknown) => void;
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

/** The analytics projector's nudge channel; the payload names the stream, as for the event router. */
export const ANALYTICS_CHANNEL = "analytics";

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

/** One project; batched when the sink allows it (see the top of the file). */
export async function publishProject(db: Db, projectId: string, deps: PublisherDeps): Promise<ProjectPublishResult> {
  if (deps.sink.inStatement) {
    const batch = await publishBatch(db, { projectId }, deps).catch((err) => batchFailed(deps, err));
    if (batch) return batch[0] ?? emptyResult(projectId, false);
  }
  return publishProjectRowByRow(db, projectId, deps);
}

function batchFailed(deps: PublisherDeps, err: unknown): null {
  deps.onBatchFailed?.(err);
  return null;
}

function emptyResult(projectId: string, skippedBusy: boolean): ProjectPublishResult {
  return { projectId, published: 0, failedSend: false, heldBack: false, failedRows: 0, stream: null, skippedBusy };
}

interface BatchRow {
  project_id: string;
  ok: boolean;
  published: number;
  failed_rows: number;
  held_back: boolean;
  stream: number | null;
}

/**
 * The batched run in one statement, for one project or for the projects with due rows (oldest
 * first, at most `maxProjects`). Per project: pg_try_advisory_xact_lock (a project another
 * publisher holds is skipped, as before), its first maxRowsPerProjectPerPublish pending or
 * retry_wait rows in sequence order, cut at the first retry_wait row not due yet (held back);
 * of those, the rows whose stream has no binding fail, the others go to their stream in (project,
 * sequence) order (streamAppendCtes) and are published. Locks are held until the statement commits.
 */
async function publishBatch(
  db: Db,
  which: { projectId: string } | { maxProjects: number },
  deps: PublisherDeps,
): Promise<ProjectPublishResult[]> {
  const now = deps.now();
  const { config, nudger } = deps;
  const notify = nudger.inStatement === true;
  const projects = batchProjects(which, now);
  const rows = await db.$queryRaw<BatchRow[]>`
    WITH now_at AS (SELECT ${now}::timestamp(3) AS at),
    projects AS (${projects}),
    locked AS MATERIALIZED (
      SELECT project_id, ord, pg_try_advisory_xact_lock(hashtext('outbox:' || project_id)) AS ok FROM projects
    ),
    claimed AS (
      SELECT o.id, o.project_id, o.project_seq, o.stream_index, o.event_id, o.event_type, o.envelope, o.state,
        o.next_attempt_at, l.ord
      FROM locked l CROSS JOIN LATERAL (
        SELECT * FROM outbox x
        WHERE x.project_id = l.project_id AND x.state IN ('pending', 'retry_wait')
        ORDER BY x.project_seq LIMIT ${config.outbox.maxRowsPerProjectPerPublish}
        FOR UPDATE SKIP LOCKED
      ) o
      WHERE l.ok
    ),
    held AS (
      SELECT project_id, min(project_seq) AS hold_seq FROM claimed
      WHERE state = 'retry_wait' AND (next_attempt_at IS NULL OR next_attempt_at > ${now})
      GROUP BY project_id
    ),
    due AS (
      SELECT c.* FROM claimed c LEFT JOIN held h ON h.project_id = c.project_id
      WHERE h.hold_seq IS NULL OR c.project_seq < h.hold_seq
    ),
    failed AS (
      UPDATE outbox o SET state = 'failed', next_attempt_at = NULL,
        last_error = 'no producer binding for stream ' || lpad(o.stream_index::text, 2, '0')
      FROM due d WHERE o.id = d.id AND d.stream_index >= ${config.streams.count}
      RETURNING o.project_id
    ),
    to_send AS (
      SELECT d.id, d.stream_index, d.event_id, d.project_id, d.event_type, d.envelope,
        row_number() OVER (ORDER BY d.ord, d.project_id, d.project_seq) AS sort
      FROM due d WHERE d.stream_index < ${config.streams.count}
    ),
    ${streamAppendCtes()},
    published AS (
      UPDATE outbox o SET state = 'published', published_at = now_at.at, next_attempt_at = NULL
      FROM to_send s CROSS JOIN now_at WHERE o.id = s.id
      RETURNING o.project_id
    ),
    nudged AS (
      SELECT pg_notify(${pgNudgeChannel(EVENT_ROUTER_CHANNEL)}, stream_index::text),
        pg_notify(${pgNudgeChannel(ANALYTICS_CHANNEL)}, stream_index::text)
      FROM (SELECT DISTINCT stream_index FROM entries) s WHERE ${notify}
    )
    SELECT l.project_id, l.ok,
      (SELECT count(*) FROM published p WHERE p.project_id = l.project_id)::int AS published,
      (SELECT count(*) FROM failed f WHERE f.project_id = l.project_id)::int AS failed_rows,
      EXISTS (SELECT 1 FROM held h WHERE h.project_id = l.project_id) AS held_back,
      (SELECT min(s.stream_index) FROM to_send s WHERE s.project_id = l.project_id) AS stream,
      (SELECT count(*) FROM nudged)::int AS nudges
    FROM locked l ORDER BY l.ord`;
  const results = rows.map((r) => ({
    ...emptyResult(r.project_id, !r.ok),
    published: r.published,
    failedRows: r.failed_rows,
    heldBack: r.held_back,
    stream: r.published > 0 ? r.stream : null,
  }));
  if (!notify) await nudgeAfterBatch(db, nudger, results);
  return results;
}

/** The projects of a batched run: the one asked for, or those with due rows, oldest first. */
function batchProjects(which: { projectId: string } | { maxProjects: number }, now: Date): Sql {
  return "projectId" in which
    ? sql`SELECT ${which.projectId}::text AS project_id, 0::bigint AS ord`
    : sql`
        SELECT project_id, min(id) AS ord FROM outbox
        WHERE state = 'pending' OR (state = 'retry_wait' AND next_attempt_at <= ${now})
        GROUP BY project_id ORDER BY min(id) LIMIT ${which.maxProjects}`;
}

/** Wakes the event router and the analytics projector for each stream a batch appended to. */
async function nudgeAfterBatch(db: Db, nudger: Nudger, results: ProjectPublishResult[]): Promise<void> {
  // Best effort, after the commit, once per stream (each consumer has a cron backstop).
  const streams = [...new Set(results.flatMap((r) => (r.stream === null ? [] : [r.stream])))];
  const hooks: AfterCommit[] = [];
  // Outside a transaction: the nudger's hooks run below, its SQL (if any) goes through the pool.
  const ctx = { tx: db as unknown as TxContext["tx"], afterCommit: (h: AfterCommit) => void hooks.push(h) };
  for (const stream of streams) {
    await nudger.nudge(ctx, EVENT_ROUTER_CHANNEL, String(stream)).catch(() => {});
    await nudger.nudge(ctx, ANALYTICS_CHANNEL, String(stream)).catch(() => {});
  }
  for (const h of hooks) await Promise.resolve(h()).catch(() => {});
}

/** One project in one transaction, sent through `sink.append` (any sink; the fallback of the batch). */
async function publishProjectRowByRow(db: Db, projectId: string, deps: PublisherDeps): Promise<ProjectPublishResult> {
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
    const toSend = await rowsToSend(tx, rows, now, deps, result);
    const first = toSend[0];
    if (!first) return;
    const stream = first.stream_index;
    result.stream = stream;
    if (!(await sendRows(tx, toSend, first, now, deps, result))) return;
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

/**
 * The rows sent in this run, in order: a row whose stream has no binding fails on the way, and the
 * first retry_wait row not due yet holds back the rest.
 */
async function rowsToSend(
  tx: Tx,
  rows: Row[],
  now: Date,
  deps: PublisherDeps,
  result: ProjectPublishResult,
): Promise<Row[]> {
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
  return toSend;
}

/**
 * Sends the rows through `sink.append` inside a savepoint; a failed send rolls back to it and puts
 * the first row into retry_wait (or failed). False when the send failed.
 */
async function sendRows(
  tx: Tx,
  toSend: Row[],
  first: Row,
  now: Date,
  deps: PublisherDeps,
  result: ProjectPublishResult,
): Promise<boolean> {
  const stream = first.stream_index;
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
    return false;
  }
  return true;
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
  const maxProjects = options.maxProjects ?? 1000;
  let results: ProjectPublishResult[] | null = null;
  if (deps.sink.inStatement)
    results = await publishBatch(db, { maxProjects }, deps).catch((err) => batchFailed(deps, err));
  if (!results) {
    results = [];
    const projects = await projectsWithDueRows(db, deps.now(), maxProjects);
    for (const p of projects) results.push(await publishProjectRowByRow(db, p, deps));
  }
  return { projects: results, published: results.reduce((n, r) => n + r.published, 0) };
}
