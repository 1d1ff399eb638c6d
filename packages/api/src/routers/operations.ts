import { idSchema, safeText } from "@rhumbatron/core";
import {
  countOutboxRows,
  dismissDeadLetter,
  listDeadLetters,
  listOutboxRows,
  retryDeadLetter,
  streamLag,
  usageMeters,
} from "@rhumbatron/db";
import { queueStats } from "@rhumbatron/runtime";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

const OUTBOX_STATES = ["pending", "retry_wait", "published", "failed"] as const;
const DEAD_LETTER_STATUSES = ["open", "retried", "dismissed"] as const;
const id = idSchema;

/** What operators watch and act on: outbox rows, queues and dead letters (operator role). */
export const operationsRouter = router({
  outbox: tenantProcedure("operator")
    .input(z.object({ state: z.enum(OUTBOX_STATES), limit: z.number().int().min(1).max(500).default(100) }))
    .query(({ ctx, input }) =>
      listOutboxRows(ctx.db, { tenantId: input.tenantId, state: input.state, limit: input.limit }),
    ),
  outboxCounts: tenantProcedure("operator").query(({ ctx, input }) => countOutboxRows(ctx.db, input.tenantId)),
  queues: tenantProcedure("operator").query(({ ctx, input }) => queueStats(ctx.db, input.tenantId, ctx.services.now())),
  /** Per stream: head offset, each subscription's committed offset and lag (environment-wide). */
  streamLag: tenantProcedure("operator").query(({ ctx, input }) =>
    streamLag(ctx.db, input.tenantId, ctx.services.config),
  ),
  /** The tenant's Sandbox meter this month against its budget, and the overlap classifier's calls today against its cap. */
  meters: tenantProcedure("operator").query(({ ctx, input }) =>
    usageMeters(ctx.db, input.tenantId, ctx.services.config, ctx.services.now()),
  ),
  deadLetters: tenantProcedure("operator")
    .input(
      z.object({
        status: z.enum(DEAD_LETTER_STATUSES).default("open"),
        limit: z.number().int().min(1).max(500).default(100),
      }),
    )
    .query(({ ctx, input }) =>
      listDeadLetters(ctx.db, { tenantId: input.tenantId, status: input.status, limit: input.limit }),
    ),
  /** Sends the command back to its origin queue, once; records who and when. */
  retryDeadLetter: tenantProcedure("operator")
    .input(z.object({ deadLetterId: id }))
    .mutation(({ ctx, input }) =>
      retryDeadLetter(
        ctx.db,
        { tenantId: input.tenantId, deadLetterId: input.deadLetterId, operatorId: ctx.caller.userId },
        ctx.services,
      ),
    ),
  /** Records who, when and why; sends nothing. */
  dismissDeadLetter: tenantProcedure("operator")
    .input(z.object({ deadLetterId: id, reason: safeText(2000).trim().min(1, "say why you dismiss it") }))
    .mutation(async ({ ctx, input }) => {
      await dismissDeadLetter(
        ctx.db,
        {
          tenantId: input.tenantId,
          deadLetterId: input.deadLetterId,
          operatorId: ctx.caller.userId,
          reason: input.reason,
        },
        ctx.services.now(),
      );
      return { dismissed: true };
    }),
});
