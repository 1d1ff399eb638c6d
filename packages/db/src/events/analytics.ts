import { METRIC_FOR_EVENT, type RhumbatronConfig } from "@rhumbatron/core";
import { ANALYTICS_CHANNEL, type Subscription } from "@rhumbatron/runtime";

/**
 * analytics-projector: one metric point per lifecycle Event in the dataset
 * `rhumbatron_event_metrics_<env>`; Events with no metric are consumed without a point. It runs
 * as a function of its own (not on the event router's sweep), woken by the publisher on the
 * ANALYTICS_CHANNEL for each stream it appended to, so the metrics follow the work continuously.
 */
export const ANALYTICS = "analytics-projector";

export { ANALYTICS_CHANNEL };

export function analyticsSubscription(config: RhumbatronConfig): Subscription {
  const dataset = config.eventRouter.metricsDataset;
  return {
    name: ANALYTICS,
    group: (events) => (events.length ? [events] : []),
    async apply(ctx, events) {
      const points = events.flatMap(({ event }) => {
        const metric = METRIC_FOR_EVENT[event.eventType];
        if (!metric) return [];
        return [
          {
            dataset,
            name: metric(event.payload as Record<string, unknown>),
            eventId: event.eventId,
            tenantId: event.tenantId,
            projectId: event.projectId,
            value: 1,
            occurredAt: new Date(event.timestamp),
          },
        ];
      });
      if (points.length) await ctx.tx.metricPoint.createMany({ data: points, skipDuplicates: true });
    },
  };
}
