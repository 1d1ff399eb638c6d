import { listProjects } from "@rhumbatron/db";
import { router, tenantProcedure } from "../trpc.ts";

export const projectsRouter = router({
  /** The tenant's projects, newest first, archived last. */
  list: tenantProcedure("viewer").query(({ ctx, input }) => listProjects(ctx.db, input.tenantId)),
});
