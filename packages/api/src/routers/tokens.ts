import { DomainError, idSchema, safeText } from "@rhumbatron/core";
import { createApiToken, listApiTokens, revokeApiToken } from "@rhumbatron/db";
import { z } from "zod";
import { hasAtLeast, ROLE_ORDER } from "../roles.ts";
import { router, tenantProcedure } from "../trpc.ts";

/**
 * Personal API tokens (docs/sign-in.md). Any member may hold tokens for themselves in
 * a tenant, each with a role no higher than their own; the secret is returned by `create` only.
 * Admins see and revoke every token of the tenant; anyone else only their own (another's is NOT_FOUND).
 */
export const tokensRouter = router({
  create: tenantProcedure("viewer")
    .input(z.object({ name: safeText(100).trim().min(1, "name the token"), role: z.enum(ROLE_ORDER) }))
    .mutation(({ ctx, input }) => {
      if (!hasAtLeast(ctx.membership.role, input.role)) {
        throw new DomainError("FORBIDDEN", `a token's role cannot be above your own (${ctx.membership.role})`);
      }
      return createApiToken(
        ctx.db,
        { tenantId: input.tenantId, userId: ctx.caller.userId, name: input.name, role: input.role },
        ctx.services.now(),
      );
    }),
  list: tenantProcedure("viewer").query(({ ctx, input }) =>
    listApiTokens(ctx.db, {
      tenantId: input.tenantId,
      userId: ctx.membership.role === "admin" ? null : ctx.caller.userId,
    }),
  ),
  revoke: tenantProcedure("viewer")
    .input(z.object({ tokenId: idSchema }))
    .mutation(({ ctx, input }) =>
      revokeApiToken(
        ctx.db,
        {
          tenantId: input.tenantId,
          tokenId: input.tokenId,
          userId: ctx.membership.role === "admin" ? null : ctx.caller.userId,
        },
        ctx.services.now(),
      ),
    ),
});
