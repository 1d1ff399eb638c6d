import type { RhumbatronConfig } from "@rhumbatron/core";
import { ANALYTICS, analyticsSubscription } from "@rhumbatron/db";
import { ANALYTICS_CHANNEL, type ConsumeResult, type Nudger, withTransaction } from "@rhumbatron/runtime";
import { drain, parseStream } from "./event-router.ts";
import { DEFAULT_RUN_KEY, type WorkerFunction } from "./types.ts";

/**
 * The analytics projector (docs/metrics.md), continuously: the publisher nudges it for each stream
 * it appended to, and it drains that stream in batches of config.eventRouter.batchSize until caught
 * up. The first design ran one batch per stream on the event router's sweep (a stream every 8 minutes),
 * a pace set by a cloud platform's per-request limits that do not bind here, and the metrics page
 * trailed the work by hours on a busy day. The cron tick (every minute) is the backstop for a lost
 * nudge: it and a nudge that names no stream (the listener's catch-up) drain every stream.
 */
export type AnalyticsProjectorDeps = { config: RhumbatronConfig; nudger: Nudger };

/**
 * Batches per stream in one run. A run stays short (an Inngest step, a serverless function's time
 * limit); a longer backlog goes on in the next run, which the run nudges at once.
 */
export const ANALYTICS_BATCHES_PER_RUN = 10;

export function analyticsProjectorFunction({ config, nudger }: AnalyticsProjectorDeps): WorkerFunction {
  const analytics = analyticsSubscription(config);
  const every = Array.from({ length: config.streams.count }, (_, i) => i);
  return {
    id: ANALYTICS,
    triggers: { cron: config.streams.sweepCron, nudge: ANALYTICS_CHANNEL },
    retries: 3,
    async handler(ctx) {
      const streams = ctx.key === DEFAULT_RUN_KEY ? every : [parseStream(ctx.key, config.streams.count)];
      const outcomes: Record<string, string[]> = {};
      const more: number[] = [];
      const problems: ConsumeResult[] = [];
      for (const stream of streams) {
        const results = await drain(ctx, analytics, stream, ANALYTICS_BATCHES_PER_RUN);
        const last = results.at(-1);
        if (last?.outcome === "ack" && last.delivered >= config.eventRouter.batchSize) more.push(stream);
        problems.push(...results.filter((r) => r.outcome === "nack" || r.outcome === "dead_letter"));
        if (results.some((r) => r.delivered > 0))
          outcomes[String(stream)] = results.map((r) => `${r.outcome}:${r.applied}`);
      }
      if (more.length) {
        await withTransaction(ctx.db, async (tx) => {
          for (const s of more) await nudger.nudge(tx, ANALYTICS_CHANNEL, String(s));
        });
      }
      if (problems.length) ctx.logger.warn({ problems }, "analytics batches did not apply");
      return { streams: streams.length, more, outcomes };
    },
  };
}
