import { type Sql, sql, type SqlClient as Tx } from "../sql.ts";

/**
 * The stream store. Entries get gap-free offsets per stream, assigned under the stream's head row
 * lock: a publisher holds it until its transaction commits, so offsets become visible in offset
 * order and a consumer that advances its cursor can never skip an entry.
 */
export interface StreamRecord {
  eventId: string;
  projectId: string;
  eventType: string;
  envelope: unknown;
}

export interface StreamSink {
  /** Appends records to one stream inside the publisher's transaction; returns their offsets. */
  append(tx: Tx, stream: number, records: readonly StreamRecord[], now: Date): Promise<bigint[]>;
  /**
   * Set when the stream store is streamAppendCtes' tables in the outbox's own database: the
   * publisher may then move a batch from the outbox into the streams in one statement. A sink
   * without it is sent to through `append`, one project per transaction.
   */
  readonly inStatement?: boolean;
}

/**
 * The stream half of the publisher's statement, to follow a CTE `to_send` with columns
 * (stream_index, event_id, project_id, event_type, envelope, sort) and a CTE `now_at` (one column,
 * `at`): each stream's head advances by its number of entries (heads upserted in stream order, so
 * two publishers cannot deadlock, and held until commit, so offsets become visible in offset
 * order); the entries take the consecutive offsets ending at the new head, in `sort` order.
 */
export function streamAppendCtes(): Sql {
  return sql`
  numbered AS (
    SELECT s.*, row_number() OVER (PARTITION BY s.stream_index ORDER BY s.sort) AS k,
      count(*) OVER (PARTITION BY s.stream_index) AS n
    FROM to_send s
  ),
  stream_head AS (
    INSERT INTO stream_heads AS h (stream_index, last_offset)
    SELECT stream_index, count(*) FROM to_send GROUP BY stream_index ORDER BY stream_index
    ON CONFLICT (stream_index) DO UPDATE SET last_offset = h.last_offset + EXCLUDED.last_offset
    RETURNING h.stream_index, h.last_offset
  ),
  entries AS (
    INSERT INTO stream_entries (stream_index, "offset", event_id, project_id, event_type, envelope, published_at)
    SELECT s.stream_index, h.last_offset - s.n + s.k, s.event_id, s.project_id, s.event_type, s.envelope, now_at.at
    FROM numbered s JOIN stream_head h ON h.stream_index = s.stream_index CROSS JOIN now_at
    ORDER BY s.stream_index, s.k
    RETURNING stream_index
  )`;
}

export const postgresStreamSink: StreamSink = {
  inStatement: true,
  async append(tx, stream, records, now) {
    if (records.length === 0) return [];
    const n = records.length;
    const head = await tx.$queryRaw<{ last_offset: bigint }[]>`
      INSERT INTO stream_heads (stream_index, last_offset) VALUES (${stream}, ${n})
      ON CONFLICT (stream_index) DO UPDATE SET last_offset = stream_heads.last_offset + ${n}
      RETURNING last_offset`;
    const last = head[0]?.last_offset ?? BigInt(n);
    const offsets = records.map((_, i) => last - BigInt(n - 1 - i));
    await tx.$executeRaw`
      INSERT INTO stream_entries (stream_index, "offset", event_id, project_id, event_type, envelope, published_at)
      SELECT ${stream}, ${last}::bigint - ${n}::bigint + r.ord, r.j->>'eventId', r.j->>'projectId', r.j->>'eventType',
        r.j->'envelope', ${now}
      FROM jsonb_array_elements(${JSON.stringify(records)}::jsonb) WITH ORDINALITY AS r(j, ord)`;
    return offsets;
  },
};

export interface StreamEntryRow {
  streamIndex: number;
  offset: bigint;
  eventId: string;
  projectId: string;
  eventType: string;
  envelope: unknown;
  publishedAt: Date;
}

/** Entries after `afterOffset`, in offset order. */
export async function readStream(
  tx: Tx,
  stream: number,
  afterOffset: bigint,
  limit: number,
): Promise<StreamEntryRow[]> {
  const rows = await tx.$queryRaw<
    {
      stream_index: number;
      offset: bigint;
      event_id: string;
      project_id: string;
      event_type: string;
      envelope: unknown;
      published_at: Date;
    }[]
  >`
    SELECT stream_index, "offset", event_id, project_id, event_type, envelope, published_at FROM stream_entries
    WHERE stream_index = ${stream} AND "offset" > ${afterOffset} ORDER BY "offset" LIMIT ${limit}`;
  return rows.map((r) => ({
    streamIndex: r.stream_index,
    offset: r.offset,
    eventId: r.event_id,
    projectId: r.project_id,
    eventType: r.event_type,
    envelope: r.envelope,
    publishedAt: r.published_at,
  }));
}
