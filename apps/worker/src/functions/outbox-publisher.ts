import type { RhumbatronConfig } from "@rhumbatron/core";
import {
  type Nudger,
  OUTBOX_NUDGE_CHANNEL,
  postgresStreamSink,
  publishDue,
  withTransaction,
} from "@rhumbatron/runtime";
import type { WorkerFunction } from "./types.ts";

/**
 * Moves committed outbox rows to their streams. Nudged by every outbox write on commit; the cron
 * is the backstop (and picks up rows whose retry has come due).
 */
export function outboxPublisherFunction(config: RhumbatronConfig, nudger: Nudger): WorkerFunction {
  return {
    id: "outbox-publisher",
    triggers: { cron: config.streams.sweepCron, nudge: OUTBOX_NUDGE_CHANNEL },
    retries: 3,
    async handler({ db, now, logger, outage }) {
      const r = await publishDue(db, {
        config,
        sink: postgresStreamSink,
        nudger,
        now,
        onBatchFailed: (err) => {
          if (!outage?.failed(err))
            logger.warn({ err }, "the outbox batch failed; publishing one project at a time this run");
        },
      });
      // Bounded per project and run: a project that filled its quota has more rows, so run again soon.
      const more = r.projects.some((p) => p.published >= config.outbox.maxRowsPerProjectPerPublish);
      if (more) await withTransaction(db, (ctx) => nudger.nudge(ctx, OUTBOX_NUDGE_CHANNEL));
      const failed = r.projects.filter((p) => p.failedSend || p.failedRows > 0);
      if (failed.length) logger.warn({ projects: failed }, "outbox rows failed to publish");
      return { projects: r.projects.length, published: r.published, failedProjects: failed.length, more };
    },
  };
}
