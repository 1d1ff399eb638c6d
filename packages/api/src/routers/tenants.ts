import { authedProcedure, router } from "../trpc.ts";

export const tenantsRouter = router({
  /** The caller's tenants with their role in each (already loaded with the caller: no further read). */
  mine: authedProcedure.query(({ ctx }) => ctx.caller.memberships),
});
