import { DomainError, streamForSweep } from "@rhumbatron/core";
import {
  archiverSubscription,
  causalRouterSubscription,
  notifierSubscription,
  projectorSubscription,
  webhookFanOutSubscription,
} from "@rhumbatron/db";
import {
  type ConsumeResult,
  consumeOnce,
  EVENT_ROUTER_CHANNEL,
  type Subscription,
  withTransaction,
} from "@rhumbatron/runtime";
import type { WorkerContext } from "../context.ts";
import { DEFAULT_RUN_KEY, type FunctionContext, type WorkerFunction } from "./types.ts";

/**
 * The event router (docs/workflows.md, Event consumption). For stream N, on every nudge and every
 * cron tick: the project-view projector, the causal router, the notifier (people's inboxes) and the
 * webhook fan-out (docs/notifications.md), each up to config.eventRouter
 * .consumesPerSubscriptionPerRun batches. Cron ticks sweep one stream per minute and also run the
 * audit archiver. The analytics projector is a function of its own (analytics-projector.ts): on
 * the sweep it got one batch per stream every 8 minutes and the metrics trailed far behind.
 */
export type EventRouterDeps = Pick<WorkerContext, "config" | "blobs" | "nudger" | "classifier">;

/** The stream a nudge's payload names; anything else is refused before a cursor is touched. */
export function parseStream(key: string, count: number): number {
  const n = Number(key);
  if (!Number.isInteger(n) || n < 0 || n >= count) {
    throw new DomainError("INVALID_INPUT", `a nudge names stream "${key}", expected 0..${count - 1}`);
  }
  return n;
}

/** Up to `times` deliveries of one subscription on one stream, stopping at the first that is not a full ack. */
export async function drain(
  ctx: FunctionContext,
  sub: Subscription,
  stream: number,
  times: number,
): Promise<ConsumeResult[]> {
  const results: ConsumeResult[] = [];
  for (let i = 0; i < times; i++) {
    const r = await consumeOnce(ctx.db, sub, stream, { config: ctx.config, now: ctx.now, owner: ctx.worker.workerId });
    results.push(r);
    if (r.outcome !== "ack" || r.delivered < ctx.config.eventRouter.batchSize) break;
  }
  return results;
}

export function eventRouterFunction({ config, blobs, nudger, classifier }: EventRouterDeps): WorkerFunction {
  const projector = projectorSubscription(config);
  const archiver = archiverSubscription(blobs);
  const notifier = notifierSubscription();
  return {
    id: "event-router",
    triggers: { cron: config.streams.sweepCron, nudge: EVENT_ROUTER_CHANNEL },
    retries: 3,
    async handler(ctx) {
      if ((ctx.trigger === "nudge" || ctx.trigger === "start") && ctx.key === DEFAULT_RUN_KEY) {
        // A nudge that names no stream (the catch-up after the listener reconnected: nudges sent
        // meanwhile were lost), or the worker's start (nudges sent while it was down were lost too;
        // the cron sweep alone would reach a stream's backlog only once every `count` minutes).
        // Every stream gets a nudge of its own, so each drains under its key.
        await withTransaction(ctx.db, async (tx) => {
          for (let s = 0; s < config.streams.count; s++) await nudger.nudge(tx, EVENT_ROUTER_CHANNEL, String(s));
        });
        return { catchUp: config.streams.count };
      }
      const sweep = ctx.trigger !== "nudge";
      const stream = sweep
        ? streamForSweep(ctx.now(), config.streams.count)
        : parseStream(ctx.key, config.streams.count);
      const per = config.eventRouter.consumesPerSubscriptionPerRun;
      const causal = causalRouterSubscription({
        config,
        nudger,
        classifier,
        now: ctx.now,
        log: (fields, msg) => ctx.logger.info({ stream, ...fields }, msg),
      });
      const webhooks = webhookFanOutSubscription({
        config,
        nudger,
        now: ctx.now,
        log: (fields, msg) => ctx.logger.warn({ stream, ...fields }, msg),
      });
      // The four consumers keep cursors of their own and touch disjoint rows, so they drain side by
      // side: a run lasts as long as its slowest consumer, not their sum, and a nudge that arrives
      // meanwhile waits that much less for the follow-up run.
      const subs = [projector, causal, notifier, webhooks];
      // allSettled: a run ends only when every drain has, even when one throws (then the run fails).
      const settled = await Promise.allSettled(subs.map((sub) => drain(ctx, sub, stream, per)));
      const failed = settled.find((r) => r.status === "rejected");
      if (failed) throw failed.reason;
      const drained = settled.map((r) => (r.status === "fulfilled" ? r.value : []));
      const summary: Record<string, ConsumeResult[]> = Object.fromEntries(
        subs.map((sub, i) => [sub.name, drained[i] ?? []]),
      );
      if (sweep) summary[archiver.name] = await drain(ctx, archiver, stream, 1);
      // A run is bounded (a few batches); when the projector stopped on a full batch there is more
      // on this stream, so the router nudges itself instead of leaving the rest to the cron sweep.
      const more = [projector.name, causal.name, notifier.name, webhooks.name].some((name) => {
        const last = summary[name]?.at(-1);
        return last?.outcome === "ack" && last.delivered >= config.eventRouter.batchSize;
      });
      if (more) await withTransaction(ctx.db, (tx) => nudger.nudge(tx, EVENT_ROUTER_CHANNEL, String(stream)));
      const problems = Object.values(summary)
        .flat()
        .filter((r) => r.outcome === "nack" || r.outcome === "dead_letter");
      if (problems.length) ctx.logger.warn({ stream, problems }, "event router batches did not apply");
      return {
        stream,
        sweep,
        more,
        outcomes: Object.fromEntries(
          Object.entries(summary).map(([k, v]) => [k, v.map((r) => `${r.outcome}:${r.applied}`)]),
        ),
      };
    },
  };
}
