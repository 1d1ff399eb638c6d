import type { Db } from "../client.ts";

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
