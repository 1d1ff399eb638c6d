import { secretNameSchema, secretValueSchema } from "@rhumbatron/core";
import { deleteTenantSecret, listTenantSecrets, setTenantSecret } from "@rhumbatron/db";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

/**
 * The tenant's secrets (docs/agents.md, Secrets): API keys its Agent runs get as environment variables.
 * Admins only. A value goes in with `set` and never comes out of the API: `list` answers names,
 * when and by whom, nothing computed from a value.
 */
export const secretsRouter = router({
  list: tenantProcedure("admin").query(({ ctx, input }) => listTenantSecrets(ctx.db, input.tenantId)),
  /** Creates the secret or replaces its value; runs started from now on get the new value. */
  set: tenantProcedure("admin")
    .input(z.object({ name: secretNameSchema, value: secretValueSchema }))
    .mutation(({ ctx, input }) =>
      setTenantSecret(
        ctx.db,
        { tenantId: input.tenantId, name: input.name, value: input.value, userId: ctx.caller.userId },
        { authSecret: ctx.services.credentialSecret, now: ctx.services.now() },
      ),
    ),
  delete: tenantProcedure("admin")
    .input(z.object({ name: secretNameSchema }))
    .mutation(({ ctx, input }) => deleteTenantSecret(ctx.db, { tenantId: input.tenantId, name: input.name })),
});
