import type { ClientBase } from "./base.ts";
import type {
  ApprovalInterdiff,
  ApprovalResult,
  CandidateChecks,
  CandidateDetail,
  CandidateSummary,
  CheckRerunResult,
  PromoteResult,
} from "./types.ts";

/** Candidates: show, checks, decide, rerun, promote. */
export function candidateMethods({ trpc, call, tenantId }: ClientBase) {
  return {
    async listCandidates(projectId: string, options: { limit?: number } = {}): Promise<CandidateSummary[]> {
      const t = await tenantId();
      return call(() => trpc.candidate.list.query({ tenantId: t, projectId, ...options }));
    },

    /** Plan, every Evidence record, every gap, approval state and the composed tree hash. */
    async getCandidate(candidateId: string): Promise<CandidateDetail> {
      const t = await tenantId();
      return call(() => trpc.candidate.get.query({ tenantId: t, candidateId }));
    },

    /**
     * What changed since a person last approved another Candidate of this Change (a recomposition):
     * the earlier approval, whether the tree and the Change's own diff are the same, and which files
     * the new base changed under it. Null when nobody approved another Candidate of the Change.
     */
    async approvalInterdiff(candidateId: string): Promise<ApprovalInterdiff> {
      const t = await tenantId();
      return call(() => trpc.candidate.interdiff.query({ tenantId: t, candidateId }));
    },

    /**
     * Where the Candidate's checks come from: the base's checks file (path and commit), or, for a
     * repository without one, the detected checks and the proposed file to commit.
     */
    async candidateChecks(candidateId: string): Promise<CandidateChecks> {
      const t = await tenantId();
      return call(() => trpc.candidate.checks.query({ tenantId: t, candidateId }));
    },

    /** Grants the approval for exactly this composed tree (40 hex digits, as `getCandidate` shows it). */
    async approve(candidateId: string, treeHash: string, note?: string): Promise<ApprovalResult> {
      const t = await tenantId();
      return call(() =>
        trpc.candidate.approve.mutate({ tenantId: t, candidateId, treeHash, ...(note ? { note } : {}) }),
      );
    },

    /** Rejects the Candidate (its tree, with a reason); the first decision is final. */
    async reject(candidateId: string, treeHash: string, note: string): Promise<ApprovalResult> {
      const t = await tenantId();
      return call(() => trpc.candidate.reject.mutate({ tenantId: t, candidateId, treeHash, note }));
    },

    /**
     * Runs one check of a rejected Candidate again, when its latest Evidence ended in error or fail
     * (at most the configured number of reruns per check). Follow it with `watchChange`.
     */
    async rerunCheck(candidateId: string, checkId: string): Promise<CheckRerunResult> {
      const t = await tenantId();
      return call(() => trpc.candidate.rerunCheck.mutate({ tenantId: t, candidateId, checkId }));
    },

    /** `promoted`, `alreadyPromoted`, `blocked` (with every block) or `stale`. */
    async promote(candidateId: string): Promise<PromoteResult> {
      const t = await tenantId();
      return call(() => trpc.candidate.promote.mutate({ tenantId: t, candidateId }));
    },
  };
}
