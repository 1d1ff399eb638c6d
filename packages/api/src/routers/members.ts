import { idSchema, safeText } from "@rhumbatron/core";
import { addMember, listMembers, removeMember, resetMemberPassword, setMemberRole } from "@rhumbatron/db";
import { z } from "zod";
import { ROLE_ORDER } from "../roles.ts";
import { router, tenantProcedure } from "../trpc.ts";

const userId = idSchema;
const role = z.enum(ROLE_ORDER);

/**
 * A tenant's members, for its admins (docs/sign-in.md, Members). `add` and
 * `resetPassword` return a temporary password once; the tenant always keeps one admin
 * (PRECONDITION_FAILED otherwise).
 */
export const membersRouter = router({
  list: tenantProcedure("admin").query(({ ctx, input }) => listMembers(ctx.db, input.tenantId)),
  add: tenantProcedure("admin")
    .input(
      z.object({
        email: safeText(254).trim().toLowerCase().pipe(z.email("enter an email address")),
        name: safeText(100).trim().min(1, "enter a name"),
        role,
      }),
    )
    .mutation(({ ctx, input }) =>
      addMember(ctx.db, input.tenantId, { email: input.email, name: input.name, role: input.role }, ctx.caller.userId),
    ),
  setRole: tenantProcedure("admin")
    .input(z.object({ userId, role }))
    .mutation(({ ctx, input }) => setMemberRole(ctx.db, input.tenantId, input.userId, input.role, ctx.caller.userId)),
  resetPassword: tenantProcedure("admin")
    .input(z.object({ userId }))
    .mutation(({ ctx, input }) => resetMemberPassword(ctx.db, input.tenantId, input.userId, ctx.caller.userId)),
  remove: tenantProcedure("admin")
    .input(z.object({ userId }))
    .mutation(({ ctx, input }) =>
      removeMember(ctx.db, input.tenantId, input.userId, ctx.caller.userId, ctx.services.now()),
    ),
});
