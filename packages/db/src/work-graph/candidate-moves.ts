import { type CandidateStatus, candidateStatusesInto } from "@rhumbatron/core";
import type { Prisma } from "../generated/prisma/client.ts";
import type { Tx } from "../transaction.ts";

/**
 * Moves Candidates to `to`, each only if core's transition table lets its status go there
 * (CANDIDATE_TRANSITIONS): the table decides every move, and a Candidate that moved on meanwhile
 * is left as it is. `among` narrows the starting statuses further (the verification workflow moves
 * only those it is still working on). Returns how many moved.
 */
export async function moveCandidates(
  tx: Tx,
  where: Prisma.CandidateWhereInput,
  to: CandidateStatus,
  o: { data?: Omit<Prisma.CandidateUpdateManyMutationInput, "status">; among?: readonly CandidateStatus[] } = {},
): Promise<number> {
  const from = candidateStatusesInto(to).filter((s) => o.among === undefined || o.among.includes(s));
  const moved = await tx.candidate.updateMany({
    where: { ...where, status: { in: from } },
    data: { ...o.data, status: to },
  });
  return moved.count;
}
