import {
  type DepthStep,
  type LandingHistory,
  landingIntervals,
  type MetricBucketSize,
  peakDepth,
  queueDepthSteps,
} from "@rhumbatron/core";
import type { Db } from "../client.ts";

/**
 * What a landing-queue owner reads on the metrics page (docs/metrics.md): how long Changes took to
 * land and how deep the landing queue was, for one tenant over [from, to). Percentiles are nearest
 * rank (`percentile_disc`): p90 is the smallest time that at least 90% of the landed Changes took at
 * most, always a time one of them took.
 */
export interface MetricWindowQuery {
  tenantId: string;
  bucket: MetricBucketSize;
  from: Date;
  to: Date;
  projectId?: string | null;
}

export interface LandingTimes {
  /** How many Changes the figures cover. */
  landed: number;
  p50Seconds: number | null;
  p90Seconds: number | null;
}

export interface LandingBucket extends LandingTimes {
  bucket: Date;
}

export interface LandingMetrics {
  /** From the Change's creation (the request) to its generation, for Changes that landed in the window. */
  requestToLanded: LandingTimes;
  /** From joining the landing queue (`landing_since`) to its generation, for those that landed from the queue. */
  queueToLanded: LandingTimes;
  /** Request to landed per bucket of landing; buckets where nothing landed are absent. */
  buckets: LandingBucket[];
  /** The landing queue's depth as steps from `from` to the earlier of `to` and `now`. */
  depth: { steps: DepthStep[]; current: number; peak: number };
}

type TimesRow = {
  bucket: Date | null;
  total: number;
  landed: number;
  request_p50: number | null;
  request_p90: number | null;
  queued: number;
  queue_p50: number | null;
  queue_p90: number | null;
};

export async function landingMetrics(db: Db, q: MetricWindowQuery & { now: Date }): Promise<LandingMetrics> {
  const projectId = q.projectId ?? null;
  // A landed Change: a generation whose Candidate is one of its Candidates (S0 has none).
  const rows = await db.$queryRaw<TimesRow[]>`
    WITH landed AS (
      SELECT date_trunc(${q.bucket}::text, g.created_at) AS bucket,
        extract(epoch FROM g.created_at - c.created_at)::float8 AS request_s,
        CASE WHEN c.landing_since <= g.created_at
          THEN extract(epoch FROM g.created_at - c.landing_since)::float8 END AS queue_s
      FROM canonical_generations g
      JOIN candidates k ON k.id = g.candidate_id
      JOIN changes c ON c.id = k.change_id
      JOIN projects p ON p.id = g.project_id
      WHERE p.tenant_id = ${q.tenantId} AND g.created_at >= ${q.from} AND g.created_at < ${q.to}
        AND (${projectId}::text IS NULL OR g.project_id = ${projectId}::text)
    )
    SELECT bucket, GROUPING(bucket)::int AS total, count(*)::int AS landed,
      percentile_disc(0.5) WITHIN GROUP (ORDER BY request_s) AS request_p50,
      percentile_disc(0.9) WITHIN GROUP (ORDER BY request_s) AS request_p90,
      count(queue_s)::int AS queued,
      percentile_disc(0.5) WITHIN GROUP (ORDER BY queue_s) AS queue_p50,
      percentile_disc(0.9) WITHIN GROUP (ORDER BY queue_s) AS queue_p90
    FROM landed GROUP BY GROUPING SETS ((bucket), ()) ORDER BY bucket NULLS FIRST`;
  const total = rows.find((r) => r.total === 1);
  const times = (landed: number, p50: number | null, p90: number | null): LandingTimes => ({
    landed,
    p50Seconds: p50 === null ? null : Number(p50),
    p90Seconds: p90 === null ? null : Number(p90),
  });
  const steps = queueDepthSteps(
    (await landingHistories(db, q)).flatMap(landingIntervals),
    { from: q.from, to: q.to },
    q.now,
  );
  return {
    requestToLanded: times(total?.landed ?? 0, total?.request_p50 ?? null, total?.request_p90 ?? null),
    queueToLanded: times(total?.queued ?? 0, total?.queue_p50 ?? null, total?.queue_p90 ?? null),
    buckets: rows
      .filter((r) => r.total === 0 && r.bucket !== null)
      .map((r) => ({ bucket: r.bucket as Date, ...times(r.landed, r.request_p50, r.request_p90) })),
    depth: { steps, current: steps[steps.length - 1]?.depth ?? 0, peak: peakDepth(steps) },
  };
}

/**
 * Every Change of the tenant that was ever in the landing queue, with what landingIntervals needs:
 * the toggles and cancellations from the outbox (its rows are kept: they are the record of each
 * Event), the join time and creation from the Change, its landing from canonical_generations.
 */
async function landingHistories(db: Db, q: MetricWindowQuery): Promise<LandingHistory[]> {
  const projectId = q.projectId ?? null;
  const events = await db.$queryRaw<{ change_id: string; event_type: string; at: string; on: boolean | null }[]>`
    SELECT o.envelope->>'changeId' AS change_id, o.event_type, o.envelope->>'timestamp' AS at,
      (o.envelope->'payload'->>'landWhenReady')::boolean AS on
    FROM outbox o JOIN projects p ON p.id = o.project_id
    WHERE p.tenant_id = ${q.tenantId} AND o.event_type IN ('change.landing_changed', 'change.cancelled')
      AND (${projectId}::text IS NULL OR o.project_id = ${projectId}::text)`;
  const toggled = [...new Set(events.filter((e) => e.event_type === "change.landing_changed").map((e) => e.change_id))];
  const changes = await db.$queryRaw<
    { id: string; created_at: Date; landing_since: Date | null; landed_at: Date | null }[]
  >`
    SELECT c.id, c.created_at, c.landing_since,
      (SELECT min(g.created_at) FROM candidates k
        JOIN canonical_generations g ON g.project_id = k.project_id AND g.candidate_id = k.id
        WHERE k.change_id = c.id) AS landed_at
    FROM changes c JOIN projects p ON p.id = c.project_id
    WHERE p.tenant_id = ${q.tenantId} AND c.created_at < ${q.to}
      AND (${projectId}::text IS NULL OR c.project_id = ${projectId}::text)
      AND (c.landing_since IS NOT NULL OR c.id = ANY(${toggled}::text[]))`;
  const byChange = new Map<string, typeof events>();
  for (const e of events) byChange.set(e.change_id, [...(byChange.get(e.change_id) ?? []), e]);
  return changes.map((c) => {
    const own = byChange.get(c.id) ?? [];
    const cancelled = own.find((e) => e.event_type === "change.cancelled");
    return {
      changeId: c.id,
      createdAt: c.created_at,
      landingSince: c.landing_since,
      landedAt: c.landed_at,
      cancelledAt: cancelled ? new Date(cancelled.at) : null,
      toggles: own
        .filter((e) => e.event_type === "change.landing_changed" && e.on !== null)
        .map((e) => ({ at: new Date(e.at), on: e.on === true })),
    };
  });
}
