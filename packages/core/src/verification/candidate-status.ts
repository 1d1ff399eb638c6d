/**
 * A Candidate's statuses and the moves between them, as data (spec: Candidate lifecycle). Every
 * list of statuses the code needs (what is live, what the workflow may still change, what a cancel
 * closes) is named here once, so no two places can disagree.
 *
 *   created -> verifying -> verified -> promoted
 *                  |            |
 *                  +-> rejected +-> (approval rejected) rejected -> verifying (a check rerun)
 *   created | verifying | verified -> stale (canonical moved on) ; any open one -> cancelled
 */
export const CANDIDATE_STATUSES = [
  "created",
  "verifying",
  "verified",
  "rejected",
  "stale",
  "promoted",
  "cancelled",
] as const;
export type CandidateStatus = (typeof CANDIDATE_STATUSES)[number];

export const CANDIDATE_TRANSITIONS: Readonly<Record<CandidateStatus, readonly CandidateStatus[]>> = {
  created: ["verifying", "rejected", "stale", "cancelled"],
  verifying: ["verified", "rejected", "stale", "cancelled"],
  verified: ["promoted", "rejected", "stale", "cancelled"],
  // A check rerun puts a rejected Candidate back to verifying (README: Landing, "Rerun a check").
  rejected: ["verifying", "cancelled"],
  stale: ["cancelled"],
  promoted: [],
  cancelled: [],
};

export const CANDIDATE_STATUS_SETS = {
  /** The verification workflow is still composing or checking it. */
  inProgress: ["created", "verifying"],
  /** It may still be promoted on its base: canonical advancing makes these stale. */
  live: ["created", "verifying", "verified"],
  /** The verification workflow changes nothing more by itself (a person's rerun may). */
  settled: ["verified", "rejected", "stale", "promoted", "cancelled"],
  /** What a cancel of its Change closes. */
  cancellable: ["created", "verifying", "verified", "stale"],
} as const satisfies Record<string, readonly CandidateStatus[]>;

export function candidateStatusIn(status: string, set: keyof typeof CANDIDATE_STATUS_SETS): boolean {
  return (CANDIDATE_STATUS_SETS[set] as readonly string[]).includes(status);
}

export function canMoveCandidate(from: string, to: CandidateStatus): boolean {
  return (CANDIDATE_TRANSITIONS[from as CandidateStatus] ?? []).includes(to);
}
