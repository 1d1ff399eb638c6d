import { statusesInto } from "../work-graph/statuses.ts";

/**
 * A Candidate's statuses and the moves between them, as data (docs/protocol.md, Candidates and their statuses). Every
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
  // A check rerun puts a rejected Candidate back to verifying (docs/landing.md, "Rerun a check");
  // otherwise its verdict stands, also when its Change is cancelled.
  rejected: ["verifying"],
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
} as const satisfies Record<string, readonly CandidateStatus[]>;

/** The statuses the table lets a Candidate leave for `to` (what a move to `to` may start from). */
export function candidateStatusesInto(to: CandidateStatus): CandidateStatus[] {
  return statusesInto(CANDIDATE_TRANSITIONS, to);
}

export function candidateStatusIn(status: string, set: keyof typeof CANDIDATE_STATUS_SETS): boolean {
  return (CANDIDATE_STATUS_SETS[set] as readonly string[]).includes(status);
}

export function canMoveCandidate(from: string, to: CandidateStatus): boolean {
  return (CANDIDATE_TRANSITIONS[from as CandidateStatus] ?? []).includes(to);
}

/** A planned check with no Evidence, said by where its Candidate stands instead of as a missing gap. */
export interface UnrecordedCheckState {
  kind: "running" | "stopped";
  meaning: string;
}

/**
 * What a planned check with no Evidence is, from its Candidate's status; null when the gate's
 * `missing` gap says it. While the checks run it has not finished yet. Once the Candidate went stale
 * or was cancelled, a check that had not finished was stopped and nothing is recorded for it
 * (docs/verification.md, The workflow, step 6): it neither passed nor failed. The
 * Candidate page and `rhumbatron candidate show` both say it this way.
 */
export function unrecordedCheckState(candidateStatus: string): UnrecordedCheckState | null {
  if (candidateStatusIn(candidateStatus, "inProgress")) {
    return { kind: "running", meaning: "No Evidence yet: the check has not finished." };
  }
  const stopped = (why: string): UnrecordedCheckState => ({
    kind: "stopped",
    meaning: `${why} before this check finished: it was stopped and nothing is recorded for it. It neither passed nor failed.`,
  });
  if (candidateStatus === "stale") return stopped("The Candidate went stale (main moved on)");
  if (candidateStatus === "cancelled") return stopped("The Candidate was cancelled with its Change");
  return null;
}
