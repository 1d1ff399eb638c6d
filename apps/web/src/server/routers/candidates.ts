import { getCandidate, listCandidates } from "@rhumbatron/db";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

const id = z.string().min(1).max(200);

/** Candidates (read side; approval and promotion arrive with the verification workflow). */
export const candidatesRouter = router({
  list: tenantProcedure("viewer")
    .input(z.object({ projectId: id, limit: z.number().int().min(1).max(200).default(50) }))
    .query(({ ctx, input }) =>
      listCandidates(ctx.db, { tenantId: input.tenantId, projectId: input.projectId, limit: input.limit }),
    ),
  get: tenantProcedure("viewer")
    .input(z.object({ candidateId: id }))
    .query(({ ctx, input }) => getCandidate(ctx.db, { tenantId: input.tenantId, candidateId: input.candidateId })),
});
