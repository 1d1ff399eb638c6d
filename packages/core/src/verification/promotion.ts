import type { GateResult } from "./gate.ts";
import type { VerificationPlan, VerificationPolicy } from "./plan.ts";

/**
 * Approval and promotion rules (docs/protocol.md, Approval of an exact tree; Promotion, P1-P7).
 * Deterministic: no model decides approval or promotion.
 */
export type ApprovalDecision = { kind: "granted" | "rejected"; treeHash: string; by: string; note: string | null };

export function humanGateApplies(plan: VerificationPlan, policy: VerificationPolicy): boolean {
  return plan.humanGate || policy.humanGateRiskTiers.includes(plan.riskTier);
}

export type ApprovalOutcome =
  /** `already`: the same person made the same decision on the same tree before; nothing more happens. */
  | { ok: true; decision: ApprovalDecision; rejectsCandidate: boolean; already?: true }
  | { ok: false; reason: "already_decided" | "tree_mismatch" | "note_required" | "not_composed"; message: string };

/** The first decision is final; a grant or rejection counts only for the exact composed tree shown. */
export function decideApproval(
  current: ApprovalDecision | null,
  composedTree: string | null,
  request: { kind: "granted" | "rejected"; treeHash: string; by: string; note?: string | null },
): ApprovalOutcome {
  if (current) {
    // A repeat of one's own decision (a retried click or script) is answered, not refused.
    const same = current.kind === request.kind && current.by === request.by && current.treeHash === request.treeHash;
    if (same) return { ok: true, decision: current, rejectsCandidate: false, already: true };
    return {
      ok: false,
      reason: "already_decided",
      message: `this Candidate was already ${current.kind === "granted" ? "approved" : "rejected"}; the first decision is final`,
    };
  }
  if (!composedTree) return { ok: false, reason: "not_composed", message: "the Candidate has no composed tree yet" };
  if (request.treeHash !== composedTree) {
    return {
      ok: false,
      reason: "tree_mismatch",
      // Never the new hash: a client that copied it would approve a tree nobody looked at.
      message: "this Candidate's tree changed since you loaded it; review it again",
    };
  }
  const note = request.note?.trim() || null;
  if (request.kind === "rejected" && !note)
    return { ok: false, reason: "note_required", message: "a rejection needs a note" };
  return {
    ok: true,
    decision: { kind: request.kind, treeHash: composedTree, by: request.by, note },
    rejectsCandidate: request.kind === "rejected",
  };
}

export interface PromotionFacts {
  candidateStatus: string;
  baseGeneration: number;
  canonicalGeneration: number;
  plan: VerificationPlan | null;
  gate: GateResult | null;
  approvalRequired: boolean;
  approval: ApprovalDecision | null;
  composedTree: string | null;
  activePolicy: { id: string; version: number };
  composedCommitInFork: boolean;
}

export type PreconditionResult = { ok: true } | { ok: false; stale: boolean; blocks: string[] };

/** Layer 1 of promotion: P1-P6 of docs/protocol.md, Promotion, every block at once (the CAS, layer 2, checks P7 and P5 again). */
export function checkPromotionPreconditions(f: PromotionFacts): PreconditionResult {
  if (f.baseGeneration < f.canonicalGeneration) {
    return {
      ok: false,
      stale: true,
      blocks: [`the Candidate is based on S${f.baseGeneration}, canonical is S${f.canonicalGeneration}`],
    };
  }
  const blocks: string[] = [];
  // Stacked on a Candidate that has not landed yet (docs/landing.md, Speculative stacks): its base
  // is not canonical, so it waits for that one; it is not stale.
  if (f.baseGeneration > f.canonicalGeneration) {
    blocks.push(
      `the Candidate is stacked on S${f.baseGeneration}, which is not canonical yet (canonical is S${f.canonicalGeneration}): it lands right after the Candidate below it`,
    );
  }
  if (f.candidateStatus !== "verified") blocks.push(`the Candidate is ${f.candidateStatus}, not verified`);
  if (!f.plan) blocks.push("no Verification Plan");
  if (f.plan && !f.gate) blocks.push("the gate has not run");
  for (const g of f.gate?.gaps ?? []) blocks.push(`gap ${g.gap} on ${g.checkId}: ${g.detail}`);
  if (f.approvalRequired) {
    if (!f.approval) blocks.push("approval is pending");
    else if (f.approval.kind === "rejected") blocks.push(`approval was rejected: ${f.approval.note ?? ""}`.trim());
    else if (f.approval.treeHash !== f.composedTree) blocks.push("the approval was for another tree");
  }
  const mismatch = f.plan ? planPolicyMismatch(f.plan, f.activePolicy) : null;
  if (mismatch) blocks.push(mismatch);
  if (!f.composedCommitInFork) blocks.push("the composed commit is not in the Candidate fork");
  return blocks.length ? { ok: false, stale: false, blocks } : { ok: true };
}

/**
 * Why a plan is not under the project's active policy (both versions named), or null when it is.
 * A Candidate planned before a policy edit is blocked: its checks and gate answered another policy.
 */
export function planPolicyMismatch(
  plan: Pick<VerificationPlan, "policyId" | "policyVersion">,
  active: { id: string; version: number },
): string | null {
  if (plan.policyId === active.id && plan.policyVersion === active.version) return null;
  return `the plan used ${plan.policyId} v${plan.policyVersion}, the active policy is ${active.id} v${active.version}`;
}

/** `ahead`: stacked on a generation canonical has not reached yet (it waits, and is not stale). */
export type CasOutcome = "advance" | "already_promoted" | "stale" | "ahead" | "policy_mismatch";

/**
 * The compare-and-swap inside the project root's transaction (layer 2): the idempotency key is the
 * Candidate ID plus the expected generation, so a retry after success is already_promoted.
 */
export function decidePromotionCas(s: {
  canonicalGeneration: number;
  promotedBy: { candidateId: string; generation: number } | null;
  candidateId: string;
  expectedGeneration: number;
  planPolicyVersion: number;
  activePolicyVersion: number;
}): CasOutcome {
  if (s.promotedBy?.candidateId === s.candidateId && s.promotedBy.generation === s.expectedGeneration + 1)
    return "already_promoted";
  if (s.canonicalGeneration < s.expectedGeneration) return "ahead";
  if (s.canonicalGeneration !== s.expectedGeneration) return "stale";
  if (s.planPolicyVersion !== s.activePolicyVersion) return "policy_mismatch";
  return "advance";
}

/** Model findings must cite items of the Context Packet; an uncited or badly cited finding changes nothing. */
export function findingSupported(citations: readonly string[], contextItemIds: ReadonlySet<string>): boolean {
  return citations.length > 0 && citations.every((c) => contextItemIds.has(c));
}
