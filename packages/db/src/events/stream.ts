import type { Tx } from "../transaction.ts";

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
}

export const postgresStreamSink: StreamSink = {
  async append(tx, stream, records, now) {
    if (records.length === 0) return [];
    const n = records.length;
    const head = await tx.$queryRaw<{ last_offset: bigint }[]>`
      INSERT INTO stream_heads (stream_index, last_offset) VALUES (${stream}, ${n})
      ON CONFLICT (stream_index) DO UPDATE SET last_offset = stream_heads.last_offset + ${n}
      RETURNING last_offset`;
    const last = head[0]?.last_offset ?? BigInt(n);
    const offsets = records.map((_, i) => last - BigInt(n - 1 - i));
    await tx.streamEntry.createMany({
      data: records.map((r, i) => ({
        streamIndex: stream,
        offset: offsets[i] as bigint,
        eventId: r.eventId,
        projectId: r.projectId,
        eventType: r.eventType,
        envelope: r.envelope as object,
        publishedAt: now,
      })),
    });
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
  return tx.streamEntry.findMany({
    where: { streamIndex: stream, offset: { gt: afterOffset } },
    orderBy: { offset: "asc" },
    take: limit,
  });
}
