import { describe, expect, it } from "vitest";
import { candidateDecision, type DecisionFacts } from "./decision.ts";
import { OUTPUT_CUT_NOTE } from "./failure-excerpt.ts";
import { RETRY_TASKS_HINT } from "./landing.ts";

const facts = (o: Partial<DecisionFacts>): DecisionFacts => ({
  status: "verified",
  approval: { required: true, state: "pending", byName: null },
  checks: [
    { checkId: "build", recorded: true },
    { checkId: "unit", recorded: true },
  ],
  gaps: [],
  rejectionReason: null,
  promotionBlocks: [],
  promotion: null,
  replacedBy: null,
  rerunnable: [],
  ...o,
});

describe("the decision a Candidate's reader sees first", () => {
  it("verified and waiting for a person: ready to approve, and only approve or reject is offered", () => {
    expect(candidateDecision(facts({}))).toMatchObject({ state: "ready_to_approve", actions: ["approve", "reject"] });
    // The rule that asks for the approval is named, not a general "the policy asks".
    const approval = { required: true, state: "pending", byName: null, reasons: ["the change touches authorization"] };
    expect(candidateDecision(facts({ approval })).reasons).toEqual([
      "a person approves this exact tree: the change touches authorization",
    ]);
  });

  it("verified and approved (or needing nobody): ready to promote, naming the approver", () => {
    const approved = candidateDecision(facts({ approval: { required: true, state: "granted", byName: "Ada" } }));
    expect(approved).toMatchObject({ state: "ready_to_promote", actions: ["promote"] });
    expect(approved.headline).toContain("approved by Ada");
    const free = candidateDecision(facts({ approval: { required: false, state: "not_required", byName: null } }));
    expect(free).toMatchObject({ state: "ready_to_promote", actions: ["promote"] });
  });

  it("verified and its Change lands when ready: the landing queue promotes it, so no Promote is offered", () => {
    const approved = { required: true, state: "granted", byName: "Ada" };
    expect(candidateDecision(facts({ approval: approved, landsByQueue: true }))).toEqual({
      state: "ready_to_promote",
      headline: "Approved by Ada: the landing queue promotes it",
      reasons: ["its Change lands when ready, so the landing queue promotes it in its turn"],
      actions: [],
    });
    const free = { required: false, state: "not_required", byName: null };
    expect(candidateDecision(facts({ approval: free, landsByQueue: true })).actions).toEqual([]);
    // Waiting for a person, the approver is told what follows the approval.
    const pending = candidateDecision(facts({ landsByQueue: true }));
    expect(pending.actions).toEqual(["approve", "reject"]);
    expect(pending.reasons.at(-1)).toBe("once approved, the landing queue promotes it (its Change lands when ready)");
  });

  it("verified but refused by a precondition: blocked, every block listed, nothing offered", () => {
    const d = candidateDecision(
      facts({ promotionBlocks: ["the plan used policy-1 v1, the active policy is policy-1 v2"] }),
    );
    expect(d).toEqual({
      state: "blocked",
      headline: "Blocked: promotion would be refused now",
      reasons: ["the plan used policy-1 v1, the active policy is policy-1 v2"],
      actions: [],
    });
  });

  it("still checking: waits for the checks without Evidence, by name", () => {
    const d = candidateDecision(
      facts({
        status: "verifying",
        checks: [
          { checkId: "build", recorded: true },
          { checkId: "unit", recorded: false },
          { checkId: "browser", recorded: false },
        ],
      }),
    );
    expect(d).toMatchObject({ state: "verifying", headline: "Waiting for checks: unit, browser", actions: [] });
  });

  it("rejected: why, every gap with its rule; no approve or promote, a rerun only when one is allowed", () => {
    const gaps = [{ checkId: "unit", gap: "failed", detail: "exited with 1; 3 passed, 0 skipped, 1 failed" }];
    const d = candidateDecision(facts({ status: "rejected", rejectionReason: "1 gap", gaps }));
    expect(d).toEqual({
      state: "rejected",
      headline: "Rejected: 1 gap",
      reasons: ["unit: failed: exited with 1; 3 passed, 0 skipped, 1 failed", `to go on: ${RETRY_TASKS_HINT}`],
      actions: ["retry_tasks"],
    });
    expect(candidateDecision(facts({ status: "rejected", gaps, rerunnable: ["unit"] })).actions).toEqual([
      "rerun",
      "retry_tasks",
    ]);
  });

  it("rejected: a failed check's reason names its first failure line, marked when a Sandbox cut came before it", () => {
    const gaps = [
      {
        checkId: "build",
        gap: "failed",
        detail: "the check failed: exited with 2",
        excerpt: [
          "src/cart.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
          "src/a.ts(1,1): …",
        ],
      },
      {
        checkId: "unit",
        gap: "failed",
        detail: "the check failed: exited with 1",
        excerpt: [OUTPUT_CUT_NOTE, "not ok 4 - sums"],
      },
      { checkId: "contract", gap: "failed", detail: "undeclared routes: GET /x", excerpt: [] },
    ];
    expect(candidateDecision(facts({ status: "rejected", rejectionReason: "3 gaps", gaps })).reasons).toEqual([
      "build: failed: the check failed: exited with 2 — src/cart.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
      "unit: failed: the check failed: exited with 1 — … not ok 4 - sums",
      "contract: failed: undeclared routes: GET /x",
      `to go on: ${RETRY_TASKS_HINT}`,
    ]);
  });

  it("promoted: when, by whom and as which generation; stale: recomposed as which Candidate", () => {
    const at = new Date("2026-12-02T10:00:00Z");
    const promoted = candidateDecision(
      facts({ status: "promoted", promotion: { generation: 7, at, byName: "Ada Approver" } }),
    );
    expect(promoted).toMatchObject({ state: "promoted", actions: [] });
    expect(promoted.headline).toBe("Promoted as generation 7 by Ada Approver");
    const stale = candidateDecision(facts({ status: "stale", replacedBy: "cand_next" }));
    expect(stale).toMatchObject({ state: "stale", actions: [] });
    expect(stale.headline).toContain("recomposed as cand_next");
  });
});
