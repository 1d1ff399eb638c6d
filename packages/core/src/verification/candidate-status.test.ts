import { describe, expect, it } from "vitest";
import {
  CANDIDATE_STATUS_SETS,
  CANDIDATE_STATUSES,
  CANDIDATE_TRANSITIONS,
  candidateStatusIn,
  canMoveCandidate,
  unrecordedCheckState,
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

describe("a planned check with no Evidence", () => {
  it("is running while its Candidate is composed or verified, stopped once it went stale or was cancelled", () => {
    expect(unrecordedCheckState("created")?.kind).toBe("running");
    expect(unrecordedCheckState("verifying")?.kind).toBe("running");
    expect(unrecordedCheckState("stale")).toEqual({
      kind: "stopped",
      meaning:
        "The Candidate went stale (main moved on) before this check finished: it was stopped and nothing is recorded for it. It neither passed nor failed.",
    });
    expect(unrecordedCheckState("cancelled")?.meaning).toMatch(/^The Candidate was cancelled with its Change/);
    // Once judged, a check without Evidence is the gate's missing gap.
    for (const status of ["verified", "rejected", "promoted"]) expect(unrecordedCheckState(status)).toBeNull();
  });
});
