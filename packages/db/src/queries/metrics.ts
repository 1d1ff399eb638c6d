import { type RhumbatronConfig, streamIndex } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { ANALYTICS } from "../events/analytics.ts";

// What a landing-queue owner reads: landing times and queue depth, checks, Sandbox seconds.
export * from "./metrics-checks.ts";
export * from "./metrics-landing.ts";
export * from "./metrics-sandbox.ts";

export type MetricBucket = "hour" | "day";

export interface MetricPointSum {
  /** Start of the bucket (UTC). */
  bucket: Date;
  name: string;
  value: number;
}

/**
 * Event metric points of one tenant summed per (bucket, name) in SQL, for [from, to). Buckets are
 * UTC hours or days (date_trunc on the stored UTC timestamps). Optionally one project only.
 */
export async function metricSums(
  db: Db,
  q: { tenantId: string; dataset: string; bucket: MetricBucket; from: Date; to: Date; projectId?: string | null },
): Promise<MetricPointSum[]> {
  const projectId = q.projectId ?? null;
  const rows = await db.$queryRaw<{ bucket: Date; name: string; value: number }[]>`
    SELECT date_trunc(${q.bucket}::text, occurred_at) AS bucket, name, sum(value)::float8 AS value
    FROM metric_points
    WHERE dataset = ${q.dataset} AND tenant_id = ${q.tenantId}
      AND occurred_at >= ${q.from} AND occurred_at < ${q.to}
      AND (${projectId}::text IS NULL OR project_id = ${projectId}::text)
    GROUP BY 1, 2 ORDER BY 1, 2`;
  return rows.map((r) => ({ bucket: r.bucket, name: r.name, value: Number(r.value) }));
}

export interface AnalyticsLag {
  /** Nothing of the tenant's waits for the analytics projector. */
  upToDate: boolean;
  /** The tenant's Events on the streams that the projector has not consumed yet. */
  waiting: number;
  /** When the oldest of them reached its stream (null when none waits). */
  oldestWaitingSince: Date | null;
  /** How far the metrics trail: `now` minus that time, in whole seconds (0 when none waits). */
  behindSeconds: number;
}

/**
 * How far the analytics projector (and so the metric points) trails one tenant's Events: the
 * entries of the tenant's projects past the projector's cursor on each stream, and how long the
 * oldest has waited. Streams are shared by tenants, so only the tenant's own entries are counted
 * (another tenant's volume is not this tenant's business). Each stream is read from its cursor
 * onward along the primary key, so the query costs what is waiting, not the stream's length.
 */
export async function analyticsLag(
  db: Db,
  q: { tenantId: string; now: Date },
  config: Pick<RhumbatronConfig, "streams">,
): Promise<AnalyticsLag> {
  const [projects, cursors] = await Promise.all([
    db.project.findMany({ where: { tenantId: q.tenantId }, select: { id: true } }),
    db.streamCursor.findMany({
      where: { subscription: ANALYTICS },
      select: { streamIndex: true, committedOffset: true },
    }),
  ]);
  const projectIds = projects.map((p) => p.id);
  const streams = [...new Set(projectIds.map((id) => streamIndex(id, config.streams.count)))];
  const after = streams.map((s) => Number(cursors.find((c) => c.streamIndex === s)?.committedOffset ?? 0n));
  const rows = streams.length
    ? await db.$queryRaw<{ waiting: number; oldest: Date | null }[]>`
        SELECT count(*)::int AS waiting, min(e.published_at) AS oldest
        FROM unnest(${streams}::int[], ${after}::bigint[]) AS c(stream_index, after_offset)
        JOIN stream_entries e ON e.stream_index = c.stream_index AND e."offset" > c.after_offset
        WHERE e.project_id = ANY(${projectIds}::text[])`
    : [];
  const waiting = rows[0]?.waiting ?? 0;
  const oldest = rows[0]?.oldest ?? null;
  const behindMs = oldest ? Math.max(q.now.getTime() - oldest.getTime(), 0) : 0;
  return { upToDate: waiting === 0, waiting, oldestWaitingSince: oldest, behindSeconds: Math.floor(behindMs / 1000) };
}
