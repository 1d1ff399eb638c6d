import { idSchema } from "@rhumbatron/core";
import { readProjectChecks } from "@rhumbatron/db";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

/**
 * projects.checks (merged into the projects router in _app.ts): where the project's checks come
 * from at its canonical head (its checks file, detected, the file's problems, or none) and its
 * latest setup runs. Never fails on a malformed file: that is the `invalid` answer.
 */
export const projectChecksRouter = router({
  checks: tenantProcedure("viewer")
    .input(z.object({ projectId: idSchema, setupRuns: z.number().int().min(1).max(50).optional() }))
    .query(({ ctx, input }) =>
      readProjectChecks(ctx.db, ctx.services.canonicalReader(ctx.db), {
        tenantId: input.tenantId,
        projectId: input.projectId,
        ...(input.setupRuns === undefined ? {} : { setupRuns: input.setupRuns }),
      }),
    ),
});
