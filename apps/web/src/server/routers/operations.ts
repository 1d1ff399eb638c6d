import { countOutboxRows, listOutboxRows } from "@rhumbatron/db";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

const OUTBOX_STATES = ["pending", "retry_wait", "published", "failed"] as const;

/** What operators watch: outbox rows by state with their last errors (more arrives with the queues). */
export const operationsRouter = router({
  outbox: tenantProcedure("operator")
    .input(z.object({ state: z.enum(OUTBOX_STATES), limit: z.number().int().min(1).max(500).default(100) }))
    .query(({ ctx, input }) =>
      listOutboxRows(ctx.db, { tenantId: input.tenantId, state: input.state, limit: input.limit }),
    ),
  outboxCounts: tenantProcedure("operator").query(({ ctx, input }) => countOutboxRows(ctx.db, input.tenantId)),
});
