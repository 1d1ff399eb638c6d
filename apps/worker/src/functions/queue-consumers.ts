import { QUEUE_PURPOSES, type QueuePurpose, type RhumbatronConfig } from "@rhumbatron/core";
import {
  candidateCreateHandler,
  deadLetterHandler,
  dispatchChange,
  handleWake,
  workflowStartHandler,
} from "@rhumbatron/db";
import {
  type CommandHandler,
  consumeQueue,
  type EnqueueDeps,
  type Nudger,
  queueChannel,
  withTransaction,
} from "@rhumbatron/runtime";
import { webhookDeliverHandler } from "../webhooks/deliver.ts";
import type { WorkerFunction } from "./types.ts";

/**
 * One consumer function per queue, each with its queue's policy (config.queues.policies: batch,
 * retries, delay, what happens when they run out). The handler registry says which command types
 * each queue's consumer accepts; anything else goes straight to the dead-letter queue. The
 * database-only handlers are here, and the webhook deliveries (an HTTP call, no source store); those
 * that need the source store (provisioning, cleanup, forks sweep, index builds) come in through
 * `extra` from buildFunctions.
 */
export function commandHandlers(
  deps: EnqueueDeps,
  extra: Partial<Record<QueuePurpose, CommandHandler[]>> = {},
): Record<QueuePurpose, CommandHandler[]> {
  const base: Record<QueuePurpose, CommandHandler[]> = {
    "agent-wakeups": [
      {
        commandTypes: ["agent.wake"],
        handle: async (ctx) => (await handleWake(ctx, deps)).result,
      },
    ],
    integration: [
      {
        commandTypes: ["change.dispatch"],
        handle: async (ctx) => {
          if (!ctx.command.changeId) throw new Error("change.dispatch needs a changeId");
          return dispatchChange(ctx, ctx.command.changeId, deps, ctx.command.commandId);
        },
      },
      candidateCreateHandler(deps),
    ],
    indexing: [],
    verification: [workflowStartHandler(deps)],
    release: [workflowStartHandler(deps)],
    webhooks: [webhookDeliverHandler(deps)],
    "dead-letter": [deadLetterHandler(deps)],
  };
  for (const [q, hs] of Object.entries(extra) as [QueuePurpose, CommandHandler[]][]) base[q] = [...base[q], ...hs];
  return base;
}

export function queueConsumerFunctions(
  config: RhumbatronConfig,
  nudger: Nudger,
  extra: (deps: EnqueueDeps) => Partial<Record<QueuePurpose, CommandHandler[]>> = () => ({}),
): WorkerFunction[] {
  return QUEUE_PURPOSES.map((purpose) => ({
    id: `queue-${purpose}`,
    triggers: { cron: config.queues.pollCron, nudge: queueChannel(purpose) },
    retries: 3,
    async handler({ db, now, logger, worker }) {
      const deps = {
        config,
        nudger,
        now,
        owner: worker.workerId,
        log: (fields: Record<string, unknown>, msg: string) => logger.warn({ queue: purpose, ...fields }, msg),
      };
      const r = await consumeQueue(db, purpose, commandHandlers(deps, extra(deps))[purpose], deps);
      // A full batch means more may be waiting: run again at once rather than at the next poll.
      if (r.leased >= config.queues.policies[purpose].batchSize) {
        await withTransaction(db, (ctx) => nudger.nudge(ctx, queueChannel(purpose)));
      }
      return r;
    },
  }));
}
