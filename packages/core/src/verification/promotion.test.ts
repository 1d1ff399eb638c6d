import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import { checkCompatibility } from "./compatibility.ts";
import { gateRequiredChecks } from "./gate.ts";
import { buildVerificationPlan, DEFAULT_POLICY } from "./plan.ts";
import {
  checkPromotionPreconditions,
  decideApproval,
  decidePromotionCas,
  findingSupported,
  humanGateApplies,
  type PromotionFacts,
} from "./promotion.ts";
import { shopChecks } from "./shop-checks.testing.ts";

const config = loadConfig("dev");
const plan = buildVerificationPlan(
  { riskTier: "high", invariants: [], goals: {} },
  [],
  DEFAULT_POLICY,
  config,
  shopChecks(),
);
const passing = plan.checks.map((c) => ({
  id: c.id,
  checkId: c.id,
  status: "pass" as const,
  coverage: "checked_supported" as const,
  durationMs: 10,
  timeoutSeconds: c.timeoutSeconds,
  completedAt: new Date(0),
  metrics: {},
  outputKey: null,
  detail: "",
  excerpt: null,
}));

const facts = (o: Partial<PromotionFacts> = {}): PromotionFacts => ({
  candidateStatus: "verified",
  baseGeneration: 3,
  canonicalGeneration: 3,
  plan,
  gate: gateRequiredChecks(plan, passing),
  approvalRequired: true,
  approval: { kind: "granted", treeHash: "tree_a", by: "usr_1", note: null },
  composedTree: "tree_a",
  activePolicy: { id: "policy-1", version: 1 },
  composedCommitInFork: true,
  ...o,
});

describe("approval", () => {
  it("applies to gated tiers and authorization changes", () => {
    expect(humanGateApplies(plan, DEFAULT_POLICY)).toBe(true);
  });

  it("binds a decision to the exact composed tree, needs a note to reject, and the first decision is final", () => {
    expect(decideApproval(null, "tree_a", { kind: "granted", treeHash: "tree_b", by: "u" })).toMatchObject({
      ok: false,
      reason: "tree_mismatch",
    });
    expect(decideApproval(null, "tree_a", { kind: "rejected", treeHash: "tree_a", by: "u", note: " " })).toMatchObject({
      ok: false,
      reason: "note_required",
    });
    const granted = decideApproval(null, "tree_a", { kind: "granted", treeHash: "tree_a", by: "u" });
    expect(granted).toMatchObject({ ok: true, rejectsCandidate: false });
    if (!granted.ok) return;
    expect(
      decideApproval(granted.decision, "tree_a", { kind: "rejected", treeHash: "tree_a", by: "v", note: "no" }),
    ).toMatchObject({ ok: false, reason: "already_decided" });
    // The same person, decision and tree again: answered as already done, not refused.
    expect(decideApproval(granted.decision, "tree_a", { kind: "granted", treeHash: "tree_a", by: "u" })).toEqual({
      ok: true,
      decision: granted.decision,
      rejectsCandidate: false,
      already: true,
    });
    // Another approver is still refused; a mismatched tree is told to look again, without the new hash.
    expect(decideApproval(granted.decision, "tree_a", { kind: "granted", treeHash: "tree_a", by: "w" })).toMatchObject({
      ok: false,
      reason: "already_decided",
    });
    expect(decideApproval(null, "tree_new", { kind: "granted", treeHash: "tree_old", by: "u" })).toEqual({
      ok: false,
      reason: "tree_mismatch",
      message: "this Candidate's tree changed since you loaded it; review it again",
    });
    expect(
      decideApproval(null, "tree_a", { kind: "rejected", treeHash: "tree_a", by: "u", note: "breaks checkout" }),
    ).toMatchObject({ ok: true, rejectsCandidate: true });
    expect(decideApproval(null, null, { kind: "granted", treeHash: "x", by: "u" })).toMatchObject({
      ok: false,
      reason: "not_composed",
    });
  });
});

describe("promotion preconditions", () => {
  it("passes when everything holds", () => {
    expect(checkPromotionPreconditions(facts())).toEqual({ ok: true });
  });

  it("is stale when canonical moved past the Candidate's base", () => {
    expect(checkPromotionPreconditions(facts({ canonicalGeneration: 4 }))).toMatchObject({ ok: false, stale: true });
  });

  it("lists every block at once", () => {
    const r = checkPromotionPreconditions(
      facts({
        candidateStatus: "verifying",
        gate: gateRequiredChecks(plan, passing.slice(1)),
        approval: null,
        activePolicy: { id: "policy-1", version: 2 },
        composedCommitInFork: false,
      }),
    );
    expect(r).toMatchObject({ ok: false, stale: false });
    if (r.ok) return;
    expect(r.blocks).toEqual([
      "the Candidate is verifying, not verified",
      "gap missing on build: no Evidence recorded",
      "approval is pending",
      "the plan used policy-1 v1, the active policy is policy-1 v2",
      "the composed commit is not in the Candidate fork",
    ]);
  });

  it("refuses an approval given for another tree, and a rejection", () => {
    const other = checkPromotionPreconditions(
      facts({ approval: { kind: "granted", treeHash: "tree_old", by: "u", note: null } }),
    );
    expect(other).toMatchObject({ ok: false, blocks: ["the approval was for another tree"] });
    const rejected = checkPromotionPreconditions(
      facts({ approval: { kind: "rejected", treeHash: "tree_a", by: "u", note: "no" } }),
    );
    expect(rejected).toMatchObject({ ok: false, blocks: ["approval was rejected: no"] });
  });
});

describe("the promotion compare-and-swap", () => {
  const base = {
    canonicalGeneration: 3,
    promotedBy: null,
    candidateId: "cand_1",
    expectedGeneration: 3,
    planPolicyVersion: 1,
    activePolicyVersion: 1,
  };
  it.each([
    ["advance", base],
    ["already_promoted", { ...base, canonicalGeneration: 4, promotedBy: { candidateId: "cand_1", generation: 4 } }],
    ["stale", { ...base, canonicalGeneration: 4, promotedBy: { candidateId: "cand_2", generation: 4 } }],
    ["policy_mismatch", { ...base, activePolicyVersion: 2 }],
  ] as const)("%s", (expected, s) => {
    expect(decidePromotionCas(s)).toBe(expected);
  });
});

describe("compatibility and findings", () => {
  it("rejects delete-versus-edit, lets shared edits through to the merge", () => {
    expect(
      checkCompatibility([
        { id: "a", files: [{ path: "x", kind: "modify" }] },
        { id: "b", files: [{ path: "y", kind: "add" }] },
      ]).status,
    ).toBe("ok");
    expect(
      checkCompatibility([
        { id: "a", files: [{ path: "x", kind: "modify" }] },
        { id: "b", files: [{ path: "x", kind: "modify" }] },
      ]),
    ).toMatchObject({
      status: "shared_file",
      shared: ["x"],
    });
    expect(
      checkCompatibility([
        { id: "a", files: [{ path: "x", kind: "delete" }] },
        { id: "b", files: [{ path: "x", kind: "modify" }] },
      ]),
    ).toMatchObject({
      status: "incompatible",
      conflicts: [{ path: "x", changeSets: ["a", "b"], reason: "deleted by a and changed by b" }],
    });
    // A Task that builds on another may delete what that one edited: it started from that edit.
    expect(
      checkCompatibility([
        { id: "a", files: [{ path: "x", kind: "modify" }] },
        { id: "b", files: [{ path: "x", kind: "delete" }], builtOn: ["a"] },
      ]).status,
    ).toBe("shared_file");
    // ... but not what an unrelated Task edited.
    expect(
      checkCompatibility([
        { id: "a", files: [{ path: "x", kind: "modify" }] },
        { id: "b", files: [{ path: "x", kind: "delete" }], builtOn: ["a"] },
        { id: "c", files: [{ path: "x", kind: "modify" }] },
      ]).status,
    ).toBe("incompatible");
  });

  it("accepts a model finding only with valid citations", () => {
    const items = new Set(["ctx_1", "ctx_2"]);
    expect(findingSupported(["ctx_1"], items)).toBe(true);
    expect(findingSupported(["ctx_9"], items)).toBe(false);
    expect(findingSupported([], items)).toBe(false);
  });
});
