import type { SandboxKind } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import type { MetricWindowQuery } from "./metrics-landing.ts";

/**
 * Sandbox seconds the tenant was charged over [from, to) per bucket and kind, from the settled
 * sandbox_charges rows of this environment's meter (docs/sandbox.md, the meter). A charge
 * counts in the bucket its workspace was reserved in, as the meter counts it in the month it was
 * reserved in; open reservations have no charge yet.
 */
export interface SandboxSecondsPoint {
  bucket: Date;
  kind: SandboxKind;
  seconds: number;
  runs: number;
}

export interface SandboxSeconds {
  env: string;
  points: SandboxSecondsPoint[];
  /** Over the whole window, per kind (only kinds with charges). */
  totals: { kind: SandboxKind; seconds: number; runs: number }[];
}

export async function sandboxSeconds(db: Db, q: MetricWindowQuery & { env: string }): Promise<SandboxSeconds> {
  const projectId = q.projectId ?? null;
  const points = await db.$queryRaw<SandboxSecondsPoint[]>`
    SELECT date_trunc(${q.bucket}::text, reserved_at) AS bucket, kind,
      sum(charged_seconds)::int AS seconds, count(*)::int AS runs
    FROM sandbox_charges
    WHERE tenant_id = ${q.tenantId} AND env = ${q.env} AND settled_at IS NOT NULL
      AND reserved_at >= ${q.from} AND reserved_at < ${q.to}
      AND (${projectId}::text IS NULL OR project_id = ${projectId}::text)
    GROUP BY 1, 2 ORDER BY 1, 2`;
  const totals = new Map<SandboxKind, { kind: SandboxKind; seconds: number; runs: number }>();
  for (const p of points) {
    const t = totals.get(p.kind) ?? { kind: p.kind, seconds: 0, runs: 0 };
    totals.set(p.kind, { kind: p.kind, seconds: t.seconds + p.seconds, runs: t.runs + p.runs });
  }
  return { env: q.env, points, totals: [...totals.values()].sort((a, b) => a.kind.localeCompare(b.kind)) };
}
