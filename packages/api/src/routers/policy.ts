import { idSchema, policyDocumentSchema } from "@rhumbatron/core";
import { getProjectPolicy, listProjectPolicyVersions, updateProjectPolicy } from "@rhumbatron/db";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

const projectId = idSchema;

/**
 * A project's verification policy (docs/verification.md, The project's policy): which checks each risk tier
 * needs, which tiers need a person's approval, check commands and timeouts, the rerun budget. Every
 * member of the tenant may read it (the Candidate pages show the plan it made); admins edit it.
 */
export const policyRouter = router({
  /** The active version and its document (version 1, the defaults, until an admin edits it). */
  get: tenantProcedure("viewer")
    .input(z.object({ projectId }))
    .query(({ ctx, input }) => getProjectPolicy(ctx.db, input, ctx.services.config)),
  /** Every version, newest first, with who made it and when. */
  history: tenantProcedure("viewer")
    .input(z.object({ projectId, limit: z.number().int().min(1).max(200).optional() }))
    .query(({ ctx, input }) => listProjectPolicyVersions(ctx.db, input, ctx.services.config)),
  /**
   * A new version with `document` and policy.updated (admins). `expectedVersion`: the version the
   * admin edited; when another edit landed first the answer is CONFLICT and nothing is written. A
   * bad document is a 400 naming the field; a document equal to the active one writes nothing.
   */
  update: tenantProcedure("admin")
    .input(
      z.object({
        projectId,
        document: policyDocumentSchema,
        expectedVersion: z.number().int().positive().optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      updateProjectPolicy(
        ctx.db,
        {
          tenantId: input.tenantId,
          projectId: input.projectId,
          actorId: ctx.caller.userId,
          document: input.document,
          ...(input.expectedVersion === undefined ? {} : { expectedVersion: input.expectedVersion }),
        },
        ctx.services,
      ),
    ),
});
