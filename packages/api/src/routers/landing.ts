import { idSchema } from "@rhumbatron/core";
import { listLandingQueue } from "@rhumbatron/db";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

const id = idSchema;

/** The landing queue of a project (docs/landing.md). */
export const landingRouter = router({
  /** Each Change that lands when ready: its position, what it waits for and since when. */
  queue: tenantProcedure("viewer")
    .input(z.object({ projectId: id }))
    .query(({ ctx, input }) => listLandingQueue(ctx.db, { tenantId: input.tenantId, projectId: input.projectId })),
});
