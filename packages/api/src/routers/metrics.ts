import {
  bucketCount,
  idSchema,
  isAllowedCombination,
  MAX_BUCKETS,
  METRIC_BUCKETS,
  METRIC_FOR_EVENT,
  METRIC_RANGES,
  rangeWindow,
} from "@rhumbatron/core";
import { analyticsLag, checkMetrics, landingMetrics, metricSums, sandboxSeconds } from "@rhumbatron/db";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

/** Every metric name the analytics projector can write (agent.woken gives two), in catalogue order. */
const KNOWN_METRICS = [
  ...new Set(Object.values(METRIC_FOR_EVENT).flatMap((name) => (name ? [name({}), name({ stale: true })] : []))),
];

const seriesInput = z
  .object({
    range: z.enum(METRIC_RANGES).default("7d"),
    bucket: z.enum(METRIC_BUCKETS).default("day"),
    projectId: idSchema.optional(),
  })
  .refine((i) => isAllowedCombination(i.range, i.bucket), {
    message: `too many buckets: at most ${MAX_BUCKETS} per chart (pick day buckets for long ranges)`,
    path: ["bucket"],
  });

/** The window a range and bucket size cover up to now, as every chart of the page reads it. */
const windowOf = (now: Date, input: z.infer<typeof seriesInput>) => ({
  range: input.range,
  bucket: input.bucket,
  buckets: bucketCount(input.range, input.bucket),
  ...rangeWindow(now, input.range, input.bucket),
});

/** Event metrics over time (the analytics projector's metric points), summed in SQL for the caller's tenant. */
export const metricsRouter = router({
  series: tenantProcedure("viewer")
    .input(seriesInput)
    .query(async ({ ctx, input }) => {
      const window = rangeWindow(ctx.services.now(), input.range, input.bucket);
      const points = await metricSums(ctx.db, {
        tenantId: input.tenantId,
        dataset: ctx.services.config.eventRouter.metricsDataset,
        bucket: input.bucket,
        ...window,
        projectId: input.projectId ?? null,
      });
      const present = [...new Set(points.map((p) => p.name))].filter((n) => !KNOWN_METRICS.includes(n));
      return {
        range: input.range,
        bucket: input.bucket,
        buckets: bucketCount(input.range, input.bucket),
        ...window,
        names: [...KNOWN_METRICS, ...present.sort()],
        points,
      };
    }),
  /**
   * How far the metrics trail the tenant's Events: how many wait for the analytics projector and
   * for how long the oldest has waited (docs/metrics.md). Asked apart from `series`, and more often.
   */
  lag: tenantProcedure("viewer").query(({ ctx, input }) =>
    analyticsLag(ctx.db, { tenantId: input.tenantId, now: ctx.services.now() }, ctx.services.config),
  ),
  /**
   * What a landing-queue owner reads (docs/metrics.md): request -> landed and queue -> landed
   * (p50, p90), per bucket, and the landing queue's depth over the window, from the rows.
   */
  landing: tenantProcedure("viewer")
    .input(seriesInput)
    .query(async ({ ctx, input }) => {
      const now = ctx.services.now();
      const window = windowOf(now, input);
      const q = { tenantId: input.tenantId, projectId: input.projectId ?? null, ...window, now };
      return { ...window, now, ...(await landingMetrics(ctx.db, q)) };
    }),
  /** Each check's durations (p50, p90, longest) and flake rate over the window, from the Evidence rows. */
  checks: tenantProcedure("viewer")
    .input(seriesInput)
    .query(async ({ ctx, input }) => {
      const window = windowOf(ctx.services.now(), input);
      const q = { tenantId: input.tenantId, projectId: input.projectId ?? null, ...window };
      return { ...window, checks: await checkMetrics(ctx.db, q) };
    }),
  /** Sandbox seconds charged on this environment's meter per bucket and kind (agent runs, Candidate checks). */
  sandbox: tenantProcedure("viewer")
    .input(seriesInput)
    .query(async ({ ctx, input }) => {
      const window = windowOf(ctx.services.now(), input);
      const q = { tenantId: input.tenantId, projectId: input.projectId ?? null, env: ctx.services.config.env };
      return { ...window, ...(await sandboxSeconds(ctx.db, { ...q, ...window })) };
    }),
});
