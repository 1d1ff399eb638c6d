import { sandboxBudgetSecondsSchema } from "@rhumbatron/core";
import { sandboxMeter, setSandboxBudget } from "@rhumbatron/db";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

/**
 * The tenant's Sandbox meter and its monthly budget (docs/sandbox.md, the meter). Everyone in
 * the tenant may read it (a Task blocked on the meter points people here); only admins set the
 * tenant's own budget, which comes before RHUMBATRON_SANDBOX_MONTHLY_SECONDS and the default.
 */
export const sandboxRouter = router({
  /** This month's used and reserved seconds, the budget and its source, and what used the seconds. */
  meter: tenantProcedure("viewer").query(({ ctx, input }) =>
    sandboxMeter(ctx.db, input.tenantId, ctx.services.config, ctx.services.now()),
  ),
  /**
   * Sets the tenant's monthly budget in seconds, from the next reservation on (this month too). A
   * value below what the month already used is allowed; the answer says so (`belowUsage`, `note`).
   * Tasks the budget had blocked resume as far as it now has room (`resumedTasks`).
   */
  setBudget: tenantProcedure("admin")
    .input(z.object({ monthlySeconds: sandboxBudgetSecondsSchema }))
    .mutation(({ ctx, input }) =>
      setSandboxBudget(
        ctx.db,
        { tenantId: input.tenantId, monthlySeconds: input.monthlySeconds, userId: ctx.caller.userId },
        ctx.services,
      ),
    ),
});
