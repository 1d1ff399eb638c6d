import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CHANGE_STATUSES } from "../work-graph/statuses.ts";
import { CANDIDATE_STATUSES } from "./candidate-status.ts";
import { changeLabel, completedTasksRerunnable, type LandingInput, landingState, RETRY_TASKS_HINT } from "./landing.ts";

const done = [
  { key: "a", state: "completed" },
  { key: "b", state: "completed" },
];
type Candidate = NonNullable<LandingInput["candidate"]>;
const candidate = (o: Partial<Candidate> = {}): Candidate => ({
  id: "cand_1",
  status: "verified",
  approvalRequired: false,
  composedTree: "tree_a",
  rejectionReason: null,
  ...o,
});
/** A Change whose every Task completed and whose newest Candidate is `c`: the landing queue's usual question. */
const input = (c: Partial<Candidate> | null, o: Partial<LandingInput> = {}): LandingInput => ({
  changeStatus: "verifying",
  tasks: done,
  candidate: c === null ? null : candidate(c),
  approval: null,
  ...o,
});
const granted = (treeHash = "tree_a") => ({ decision: "granted", treeHash });

describe("landingState: the Change is over", () => {
  it("a cancelled Change never lands, even with a verified Candidate", () => {
    expect(landingState(input({}, { changeStatus: "cancelled" }))).toEqual({
      ready: false,
      waitingFor: "cancelled",
      detail: "the Change was cancelled",
    });
  });

  it("a promoted Change, or one whose Candidate is promoted, has landed and does not land again", () => {
    const landed = { ready: false, waitingFor: "landed", detail: "promoted" };
    expect(landingState(input({ status: "verified" }, { changeStatus: "promoted" }))).toEqual(landed);
    expect(landingState(input({ status: "promoted" }))).toEqual(landed);
    // Cancelled is asked first: a cancel closes the Change whatever its Candidate says.
    expect(landingState(input({ status: "promoted" }, { changeStatus: "cancelled" })).waitingFor).toBe("cancelled");
  });
});

describe("landingState: before a Candidate counts", () => {
  it("a failed or blocked Task holds the Change, named with its state", () => {
    const tasks = [
      { key: "a", state: "completed" },
      { key: "b", state: "failed" },
      { key: "c", state: "blocked" },
      { key: "d", state: "pending" },
    ];
    expect(landingState(input(null, { changeStatus: "open", tasks }))).toEqual({
      ready: false,
      waitingFor: "blocked_task",
      detail: "Task b failed, c blocked: retry it to go on",
    });
  });

  it("Tasks still to finish: it waits for them, counting the completed ones", () => {
    const tasks = [
      { key: "a", state: "completed" },
      { key: "b", state: "running" },
      { key: "c", state: "pending" },
    ];
    expect(landingState(input(null, { changeStatus: "open", tasks }))).toEqual({
      ready: false,
      waitingFor: "tasks",
      detail: "1 of 3 Tasks completed",
    });
  });

  it("every Task completed and no Candidate yet: it waits for the composition", () => {
    expect(landingState(input(null))).toEqual({
      ready: false,
      waitingFor: "composition",
      detail: "the Candidate is being composed",
    });
  });

  it("an open Change (a Task was retried) does not land on the verified Candidate it had before", () => {
    const tasks = [
      { key: "a", state: "completed" },
      { key: "b", state: "ready" },
    ];
    expect(landingState(input({ status: "verified" }, { changeStatus: "open", tasks }))).toEqual({
      ready: false,
      waitingFor: "tasks",
      detail: "1 of 2 Tasks completed",
    });
    // Reopened with every Task completed again: the old Candidate still does not count.
    expect(landingState(input({ status: "verified" }, { changeStatus: "open" })).waitingFor).toBe("composition");
  });
});

describe("landingState: the newest Candidate", () => {
  it("created: waits for its composition; verifying: waits for the checks", () => {
    expect(landingState(input({ status: "created" }))).toEqual({
      ready: false,
      waitingFor: "composition",
      detail: "the Candidate is being composed",
    });
    expect(landingState(input({ status: "verifying" }))).toEqual({
      ready: false,
      waitingFor: "checks",
      detail: "the checks are running",
    });
  });

  it("stale: never lands on its old base, it waits for the recomposition (and says why one is held)", () => {
    expect(landingState(input({ status: "stale" }))).toEqual({
      ready: false,
      waitingFor: "recomposition",
      detail: "canonical moved past its base: being recomposed on the new generation",
    });
    // Approved for its tree, but on a base canonical has left: still not ready.
    const held = "3 recompositions in the last hour: the next one at 10:00";
    expect(
      landingState(
        input({ status: "stale", approvalRequired: true }, { approval: granted(), recompositionHeld: held }),
      ),
    ).toEqual({ ready: false, waitingFor: "recomposition", detail: held });
  });

  it("rejected by a check: stays unlanded, naming the reason", () => {
    expect(landingState(input({ status: "rejected", rejectionReason: "unit failed" }))).toEqual({
      ready: false,
      waitingFor: "rejected",
      detail: `rejected (unit failed): waits for a person; ${RETRY_TASKS_HINT}, or, while its base is still the current generation, rerun a check that errored or failed (rhumbatron candidate rerun)`,
    });
    const noReason = landingState(input({ status: "rejected", rejectionReason: null }));
    expect(noReason).toMatchObject({ ready: false, waitingFor: "rejected" });
    expect(noReason.detail).toMatch(/^rejected \(a check failed\)/);
  });

  it("rejected because its ChangeSets conflict: waits for the conflicting Tasks to be re-run", () => {
    for (const rejectionReason of ["merge conflict", "composition conflict"]) {
      expect(landingState(input({ status: "rejected", rejectionReason }))).toEqual({
        ready: false,
        waitingFor: "conflict",
        detail: "its ChangeSets conflict on the current generation: re-run the conflicting Tasks",
      });
    }
  });

  it("a status it does not know: waits, and says which", () => {
    expect(landingState(input({ status: "cancelled" }))).toEqual({
      ready: false,
      waitingFor: "checks",
      detail: "the Candidate is cancelled",
    });
  });
});

describe("landingState: a verified Candidate", () => {
  it("with no approval required: ready, it lands in queue order", () => {
    expect(landingState(input({ status: "verified", approvalRequired: false }))).toEqual({
      ready: true,
      waitingFor: "landing",
      detail: "verified; lands in queue order",
    });
  });

  it("approved for its exact composed tree: ready", () => {
    expect(landingState(input({ status: "verified", approvalRequired: true }, { approval: granted() }))).toEqual({
      ready: true,
      waitingFor: "landing",
      detail: "verified and approved; lands in queue order",
    });
  });

  it("waiting for its approval: not ready", () => {
    expect(landingState(input({ status: "verified", approvalRequired: true }))).toEqual({
      ready: false,
      waitingFor: "approval",
      detail: "waits for an approver to approve the composed tree",
    });
  });

  it("approved for another tree than the one it composed: not ready, it waits for an approval of this one", () => {
    const state = landingState(input({ status: "verified", approvalRequired: true }, { approval: granted("tree_b") }));
    expect(state).toMatchObject({ ready: false, waitingFor: "approval" });
    // Nothing composed yet to approve: a granted approval matches no tree.
    expect(
      landingState(input({ status: "verified", approvalRequired: true, composedTree: null }, { approval: granted() })),
    ).toMatchObject({ ready: false, waitingFor: "approval" });
  });

  it("rejected by an approver: not ready, whatever tree the rejection names", () => {
    for (const treeHash of ["tree_a", "tree_b"]) {
      expect(
        landingState(
          input({ status: "verified", approvalRequired: true }, { approval: { decision: "rejected", treeHash } }),
        ),
      ).toEqual({
        ready: false,
        waitingFor: "rejected",
        detail: `an approver rejected it: waits for a person; ${RETRY_TASKS_HINT}`,
      });
    }
  });
});

describe("landingState: when it is ready", () => {
  const tree = fc.constantFrom("tree_a", "tree_b");
  const arbitraryInput: fc.Arbitrary<LandingInput> = fc.record({
    changeStatus: fc.constantFrom(...CHANGE_STATUSES),
    tasks: fc.array(
      fc.record({
        key: fc.constantFrom("a", "b", "c"),
        state: fc.constantFrom("pending", "ready", "running", "completed", "failed", "blocked"),
      }),
      { maxLength: 4 },
    ),
    candidate: fc.option(
      fc.record({
        id: fc.constant("cand_1"),
        status: fc.constantFrom(...CANDIDATE_STATUSES),
        approvalRequired: fc.boolean(),
        composedTree: fc.option(tree),
        rejectionReason: fc.option(fc.constantFrom("merge conflict", "unit failed")),
      }),
    ),
    approval: fc.option(fc.record({ decision: fc.constantFrom("granted", "rejected"), treeHash: tree })),
    recompositionHeld: fc.option(fc.constant("held")),
  });

  it("only a verified newest Candidate of a Change past its Tasks, approved for its exact tree where asked", () => {
    fc.assert(
      fc.property(arbitraryInput, (i) => {
        const c = i.candidate;
        const approved = c !== null && i.approval?.decision === "granted" && i.approval.treeHash === c.composedTree;
        const expected =
          c !== null &&
          c.status === "verified" &&
          !["open", "cancelled", "promoted"].includes(i.changeStatus) &&
          (!c.approvalRequired || approved);
        const state = landingState(i);
        expect(state.ready).toBe(expected);
        // Ready and "landing" go together: the panel and the handler read the same answer.
        expect(state.waitingFor === "landing").toBe(state.ready);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("the way on from a rejected Candidate", () => {
  const cand = (status: string, rejectionReason: string | null = null) => ({ status, rejectionReason });

  it("lets completed Tasks run again once the newest Candidate conflicted or was rejected, by a check or an approver", () => {
    const rerunnable = (changeStatus: string, newest: ReturnType<typeof cand> | null, approvalRejected = false) =>
      completedTasksRerunnable({ changeStatus, newestCandidate: newest && { ...newest, approvalRejected } });
    expect(rerunnable("verifying", cand("rejected", "1 gap"))).toBe(true);
    expect(rerunnable("verifying", cand("rejected", "merge conflict"))).toBe(true);
    expect(rerunnable("conflicted", null)).toBe(true);
    expect(rerunnable("verifying", cand("verified"), true)).toBe(true);
    // Nothing to go on from: still running, verified, stale (it is recomposed), or the Change is over.
    for (const status of ["created", "verifying", "verified", "stale"]) {
      expect(rerunnable("verifying", cand(status)), status).toBe(false);
    }
    expect(rerunnable("open", null)).toBe(false);
    expect(rerunnable("cancelled", cand("rejected", "1 gap"))).toBe(false);
    expect(rerunnable("promoted", cand("rejected", "1 gap"))).toBe(false);
  });

  it("labels a Change by what it waits for: rejected, not verifying, once its newest Candidate was rejected", () => {
    expect(changeLabel("verifying", cand("rejected", "1 gap"))).toEqual({
      label: "rejected",
      tone: "bad",
      hint: `its Candidate was rejected (1 gap); ${RETRY_TASKS_HINT}`,
    });
    expect(changeLabel("verifying", cand("rejected", "merge conflict"))).toMatchObject({
      label: "conflicted",
      tone: "bad",
    });
    expect(changeLabel("verifying", cand("verifying"))).toEqual({ label: "verifying", tone: "neutral", hint: null });
    expect(changeLabel("verifying", cand("verified"))).toEqual({ label: "verified", tone: "good", hint: null });
    expect(changeLabel("promoted", cand("promoted"))).toEqual({ label: "promoted", tone: "good", hint: null });
    expect(changeLabel("open", null)).toEqual({ label: "open", tone: "neutral", hint: null });
    // A cancelled Change says cancelled whatever its Candidate was.
    expect(changeLabel("cancelled", cand("rejected", "1 gap"))).toMatchObject({ label: "cancelled" });
  });
});

describe("landingState: the queue an admin paused or drains", () => {
  const began = new Date("2026-12-04T10:00:00Z");
  it("a paused queue holds a Change that is otherwise ready, saying how to go on; running lands it", () => {
    expect(landingState(input({}, { queue: { state: "paused", since: began } }))).toEqual({
      ready: false,
      waitingFor: "paused",
      detail: "ready, but an admin paused the project's landing queue: it lands once the queue is resumed",
    });
    expect(landingState(input({}, { queue: { state: "running", since: null } })).ready).toBe(true);
    // What waits for something else still says that, not the pause.
    expect(landingState(input({ status: "verifying" }, { queue: { state: "paused", since: began } })).waitingFor).toBe(
      "checks",
    );
  });

  it("a draining queue lands a Candidate composed before the drain began, and holds one composed after", () => {
    const queue = { state: "draining" as const, since: began };
    expect(landingState(input({}, { queue, candidateCreatedAt: new Date("2026-12-04T09:59:00Z") })).ready).toBe(true);
    expect(landingState(input({}, { queue, candidateCreatedAt: new Date("2026-12-04T10:01:00Z") }))).toMatchObject({
      ready: false,
      waitingFor: "paused",
    });
    // With approval asked for, the same holds once the tree is approved.
    const approved = { approval: granted(), queue, candidateCreatedAt: new Date("2026-12-04T10:01:00Z") };
    expect(landingState(input({ approvalRequired: true }, approved)).waitingFor).toBe("paused");
  });
});
