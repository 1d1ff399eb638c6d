import type { Db } from "../client.ts";
import type { MetricWindowQuery } from "./metrics-landing.ts";

/**
 * Each check's durations and flake rate for one tenant over [from, to), from the Evidence rows
 * (docs/metrics.md). A run is an Evidence row that passed, failed or errored (a skipped check did
 * not run). A check is flaky on a tree when it failed or errored there and later passed on the same
 * tree: a rerun on the same Candidate, or another Candidate composed to the identical tree (a
 * Candidate without a composed tree is its own). A tree belongs to the window its first run of the
 * check completed in; the runs after it, up to `to`, still count.
 */
export interface CheckMetric {
  checkId: string;
  /** Runs that completed in the window. */
  runs: number;
  p50Ms: number | null;
  p90Ms: number | null;
  maxMs: number | null;
  /** Trees the check first ran on in the window. */
  trees: number;
  /** Of those, the trees it failed or errored on at least once. */
  failedTrees: number;
  /** Of those, the trees it failed or errored on and later passed on: flaky. */
  flakyTrees: number;
  /** flakyTrees / trees; null when it ran on no tree. */
  flakeRate: number | null;
  /** Reruns people asked for in the window (check_reruns). */
  reruns: number;
}

export async function checkMetrics(db: Db, q: MetricWindowQuery): Promise<CheckMetric[]> {
  const projectId = q.projectId ?? null;
  const [durations, flakes, reruns] = await Promise.all([
    db.$queryRaw<{ check_id: string; runs: number; p50: number; p90: number; max: number }[]>`
      SELECT e.check_id, count(*)::int AS runs,
        percentile_disc(0.5) WITHIN GROUP (ORDER BY e.duration_ms) AS p50,
        percentile_disc(0.9) WITHIN GROUP (ORDER BY e.duration_ms) AS p90,
        max(e.duration_ms) AS max
      FROM evidence e JOIN candidates k ON k.id = e.candidate_id JOIN projects p ON p.id = k.project_id
      WHERE p.tenant_id = ${q.tenantId} AND e.status IN ('pass', 'fail', 'error')
        AND e.completed_at >= ${q.from} AND e.completed_at < ${q.to}
        AND (${projectId}::text IS NULL OR k.project_id = ${projectId}::text)
      GROUP BY e.check_id`,
    db.$queryRaw<{ check_id: string; trees: number; failed: number; flaky: number }[]>`
      WITH per_tree AS (
        SELECT e.check_id, coalesce(k.composed_tree, k.id) AS tree, min(e.completed_at) AS first_run,
          min(e.completed_at) FILTER (WHERE e.status IN ('fail', 'error')) AS first_failure,
          max(e.completed_at) FILTER (WHERE e.status = 'pass') AS last_pass
        FROM evidence e JOIN candidates k ON k.id = e.candidate_id JOIN projects p ON p.id = k.project_id
        WHERE p.tenant_id = ${q.tenantId} AND e.status IN ('pass', 'fail', 'error') AND e.completed_at < ${q.to}
          AND (${projectId}::text IS NULL OR k.project_id = ${projectId}::text)
        GROUP BY 1, 2
      )
      SELECT check_id, count(*)::int AS trees, count(first_failure)::int AS failed,
        count(*) FILTER (WHERE last_pass > first_failure)::int AS flaky
      FROM per_tree WHERE first_run >= ${q.from}
      GROUP BY check_id`,
    db.$queryRaw<{ check_id: string; n: number }[]>`
      SELECT r.check_id, count(*)::int AS n
      FROM check_reruns r JOIN candidates k ON k.id = r.candidate_id JOIN projects p ON p.id = k.project_id
      WHERE p.tenant_id = ${q.tenantId} AND r.requested_at >= ${q.from} AND r.requested_at < ${q.to}
        AND (${projectId}::text IS NULL OR k.project_id = ${projectId}::text)
      GROUP BY r.check_id`,
  ]);
  const ids = [...new Set([...durations, ...flakes, ...reruns].map((r) => r.check_id))].sort();
  return ids.map((checkId) => {
    const d = durations.find((r) => r.check_id === checkId);
    const f = flakes.find((r) => r.check_id === checkId);
    const trees = f?.trees ?? 0;
    return {
      checkId,
      runs: d?.runs ?? 0,
      p50Ms: d ? Number(d.p50) : null,
      p90Ms: d ? Number(d.p90) : null,
      maxMs: d ? Number(d.max) : null,
      trees,
      failedTrees: f?.failed ?? 0,
      flakyTrees: f?.flaky ?? 0,
      flakeRate: trees > 0 ? (f?.flaky ?? 0) / trees : null,
      reruns: reruns.find((r) => r.check_id === checkId)?.n ?? 0,
    };
  });
}
