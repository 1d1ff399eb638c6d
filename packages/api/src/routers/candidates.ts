import { checkIdSchema, idSchema, safeText } from "@rhumbatron/core";
import {
  approvalInterdiff,
  decideCandidateApproval,
  getCandidate,
  listCandidates,
  promoteCandidate,
  readCandidateChecks,
  readCandidatePatch,
  requestCheckRerun,
} from "@rhumbatron/db";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

const id = idSchema;
const checkId = checkIdSchema;
const treeHash = z.string().regex(/^[0-9a-f]{40}$/, "the composed tree hash the client shows (40 hex digits)");

/**
 * Candidates: the read side (plan, every Evidence record, every gap, the composed tree, approval),
 * a person's approval or rejection bound to the tree they saw, and promotion.
 */
export const candidatesRouter = router({
  list: tenantProcedure("viewer")
    .input(z.object({ projectId: id, limit: z.number().int().min(1).max(200).default(50) }))
    .query(({ ctx, input }) =>
      listCandidates(ctx.db, { tenantId: input.tenantId, projectId: input.projectId, limit: input.limit }),
    ),
  get: tenantProcedure("viewer")
    .input(z.object({ candidateId: id }))
    .query(({ ctx, input }) =>
      getCandidate(ctx.db, { tenantId: input.tenantId, candidateId: input.candidateId }, ctx.services.config),
    ),
  /** The composed Candidate's patch from the blob store, or `stored: false` when there is none. */
  patch: tenantProcedure("viewer")
    .input(z.object({ candidateId: id }))
    .query(({ ctx, input }) =>
      readCandidatePatch(ctx.db, ctx.services.blobs, { tenantId: input.tenantId, candidateId: input.candidateId }),
    ),
  /** Where the Candidate's checks come from; for detected checks, the checks file to commit. */
  checks: tenantProcedure("viewer")
    .input(z.object({ candidateId: id }))
    .query(({ ctx, input }) =>
      readCandidateChecks(ctx.db, ctx.services.blobs, { tenantId: input.tenantId, candidateId: input.candidateId }),
    ),
  /** What changed since a person last approved another Candidate of the same Change (null: nobody did). */
  interdiff: tenantProcedure("viewer")
    .input(z.object({ candidateId: id }))
    .query(({ ctx, input }) =>
      approvalInterdiff(ctx.db, ctx.services.blobs, { tenantId: input.tenantId, candidateId: input.candidateId }),
    ),
  approve: tenantProcedure("approver")
    .input(z.object({ candidateId: id, treeHash, note: safeText(2000).trim().optional() }))
    .mutation(({ ctx, input }) =>
      decideCandidateApproval(
        ctx.db,
        { ...input, userId: ctx.caller.userId, kind: "granted", note: input.note ?? null },
        ctx.services,
      ),
    ),
  reject: tenantProcedure("approver")
    .input(z.object({ candidateId: id, treeHash, note: safeText(2000).trim().min(1, "say why") }))
    .mutation(({ ctx, input }) =>
      decideCandidateApproval(ctx.db, { ...input, userId: ctx.caller.userId, kind: "rejected" }, ctx.services),
    ),
  /** Runs one check of a rejected Candidate again (it ended in error or fail); the gate reads the latest record. */
  rerunCheck: tenantProcedure("member")
    .input(z.object({ candidateId: id, checkId }))
    .mutation(({ ctx, input }) =>
      requestCheckRerun(
        ctx.db,
        {
          tenantId: input.tenantId,
          candidateId: input.candidateId,
          checkId: input.checkId,
          actorId: ctx.caller.userId,
        },
        ctx.services,
      ),
    ),
  promote: tenantProcedure("approver")
    .input(z.object({ candidateId: id }))
    .mutation(({ ctx, input }) =>
      promoteCandidate(
        ctx.db,
        { tenantId: input.tenantId, candidateId: input.candidateId, actorId: ctx.caller.userId },
        ctx.services,
        ctx.services.sourceProbe(ctx.db),
      ),
    ),
});
