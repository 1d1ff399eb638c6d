import { describe, expect, it } from "vitest";
import {
  CANDIDATE_STATUS_SETS,
  CANDIDATE_STATUSES,
  CANDIDATE_TRANSITIONS,
  candidateStatusIn,
  canMoveCandidate,
} from "./candidate-status.ts";

describe("Candidate statuses", () => {
  it("names every status once and moves only to statuses it names", () => {
    expect(Object.keys(CANDIDATE_TRANSITIONS).sort()).toEqual([...CANDIDATE_STATUSES].sort());
    for (const to of Object.values(CANDIDATE_TRANSITIONS).flat()) expect(CANDIDATE_STATUSES).toContain(to);
  });

  it("ends in promoted and cancelled; a settled Candidate is never in progress", () => {
    expect(CANDIDATE_TRANSITIONS.promoted).toEqual([]);
    expect(CANDIDATE_TRANSITIONS.cancelled).toEqual([]);
    for (const s of CANDIDATE_STATUS_SETS.settled) expect(candidateStatusIn(s, "inProgress")).toBe(false);
    expect([...CANDIDATE_STATUS_SETS.inProgress, ...CANDIDATE_STATUS_SETS.settled].sort()).toEqual(
      [...CANDIDATE_STATUSES].sort(),
    );
  });

  it("allows the rerun's move back to verifying, and nothing out of promoted", () => {
    expect(canMoveCandidate("rejected", "verifying")).toBe(true);
    expect(canMoveCandidate("promoted", "verifying")).toBe(false);
    expect(canMoveCandidate("stale", "verified")).toBe(false);
    expect(canMoveCandidate("nonsense", "verified")).toBe(false);
  });
});
