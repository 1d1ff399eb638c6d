/**
 * Test support only: the model of the promotion protocol (docs/model-check.md). A few plain
 * records and, for each command, what docs/protocol.md says the real system answers and how its
 * state moves. Pure: the model-based test (promotion.model.test.ts) runs the same commands against
 * the real database and git and compares the answers and the states after every command.
 *
 * Changes and Candidates are named by their index, in the order they were made.
 */
export type ChangeStatus = "verifying" | "conflicted" | "promoted" | "cancelled";
export type CandidateStatus = "created" | "verifying" | "verified" | "rejected" | "stale" | "promoted" | "cancelled";
export type Risk = "low" | "high";

export interface ModelChange {
  status: ChangeStatus;
  /** High risk is behind the human gate (the default policy gates high and critical). */
  risk: Risk;
  /** It rewrites README.md, as every other shared Change does: after one of them landed, the rest conflict. */
  shared: boolean;
  tasks: number;
}

export interface ModelCandidate {
  change: number;
  base: number;
  status: CandidateStatus;
  /** Its ChangeSets merged into a commit in its fork, with a Verification Plan. */
  composed: boolean;
  evidence: "none" | "pass" | "fail";
  approval: { kind: "granted" | "rejected"; by: string } | null;
}

export interface Model {
  generation: number;
  /** The Candidate that made each generation 1..n (landed[0] made S1). */
  landed: number[];
  changes: ModelChange[];
  candidates: ModelCandidate[];
  /** config.integration.recompositionsPerChangePerHour. */
  recompositionLimit: number;
}

/** A promotion's blocks, by kind (promotion-answers.testing.ts, blockKind, reads the real ones). */
export type Block = "status" | "plan" | "gap" | "approval" | "fork";

export type Answer =
  | { kind: "change"; change: number }
  | { kind: "candidate"; candidate: number; created: boolean; after: "verifying" | "conflict" | "as is" }
  | { kind: "skipped"; why: "moved on" | "replaced" | "held" }
  | { kind: "verdict"; status: "verified" | "rejected" }
  | { kind: "decided"; decision: "granted" | "rejected"; already: boolean }
  | { kind: "refused"; code: string; reason?: string }
  | { kind: "promoted"; generation: number }
  | { kind: "alreadyPromoted"; generation: number }
  | { kind: "stale"; canonicalGeneration: number }
  | { kind: "blocked"; blocks: Block[] }
  | { kind: "cancelled"; candidates: number[] };

export const LIVE: readonly CandidateStatus[] = ["created", "verifying", "verified"];
/** What cancelling a Change cancels (core's candidate-status.ts: a rejected Candidate's verdict stands). */
const CANCELLABLE: readonly CandidateStatus[] = ["created", "verifying", "verified", "stale"];

export function initialModel(recompositionLimit: number): Model {
  return { generation: 0, landed: [], changes: [], candidates: [], recompositionLimit };
}

export const gated = (m: Model, c: ModelCandidate) => m.changes[c.change]?.risk === "high";

export function createChange(m: Model, c: Omit<ModelChange, "status">): Answer {
  m.changes.push({ ...c, status: "verifying" });
  return { kind: "change", change: m.changes.length - 1 };
}

/**
 * README.md of canonical no longer is the one every ChangeSet started from: a shared Change landed.
 * A shared Change composed on it conflicts (both rewrote the same line).
 */
const readmeMoved = (m: Model) => m.landed.some((i) => m.changes[m.candidates[i]?.change ?? -1]?.shared);

/** candidate.create for a Change whose Tasks completed: the same Candidate for the same ChangeSets on one generation. */
export function compose(m: Model, change: number): Answer {
  // A Change that moved on (a candidate.create delivered after its cancel) composes nothing.
  const status = m.changes[change]?.status;
  if (status === "cancelled" || status === "promoted") return { kind: "skipped", why: "moved on" };
  const existing = m.candidates.findIndex((c) => c.change === change && c.base === m.generation);
  if (existing >= 0) return { kind: "candidate", candidate: existing, created: false, after: merge(m, existing) };
  m.candidates.push({
    change,
    base: m.generation,
    status: "created",
    composed: false,
    evidence: "none",
    approval: null,
  });
  const index = m.candidates.length - 1;
  return { kind: "candidate", candidate: index, created: true, after: merge(m, index) };
}

/** The verification workflow up to its plan: a Candidate still `created` is merged, or rejected on a conflict. */
function merge(m: Model, index: number): "verifying" | "conflict" | "as is" {
  const c = m.candidates[index];
  const change = c ? m.changes[c.change] : undefined;
  if (!c || !change || c.status !== "created") return "as is";
  if (change.shared && readmeMoved(m)) {
    c.status = "rejected";
    c.evidence = "fail";
    if (change.status === "verifying") change.status = "conflicted";
    return "conflict";
  }
  c.status = "verifying";
  c.composed = true;
  return "verifying";
}

/** candidate.create after canonical advanced under `stale` (docs/landing.md, Stale Candidates recompose themselves). */
export function recompose(m: Model, stale: number): Answer {
  const from = m.candidates[stale];
  const change = from ? m.changes[from.change] : undefined;
  if (!from || !change) throw new Error(`no Candidate ${stale}`);
  if (change.status !== "verifying") return { kind: "skipped", why: "moved on" };
  const newer = m.candidates.some((c, i) => i > stale && c.change === from.change && LIVE.includes(c.status));
  if (newer) return { kind: "skipped", why: "replaced" };
  if (m.candidates.filter((c) => c.change === from.change).length >= m.recompositionLimit)
    return { kind: "skipped", why: "held" };
  return compose(m, from.change);
}

/** The checks of a `verifying` Candidate recorded (all pass, or the first fails) and the gate's verdict. */
export function verify(m: Model, index: number, verdict: "pass" | "fail"): Answer {
  const c = m.candidates[index];
  if (c?.status !== "verifying") throw new Error(`Candidate ${index} is not verifying`);
  c.evidence = verdict;
  c.status = verdict === "pass" ? "verified" : "rejected";
  return { kind: "verdict", status: c.status };
}

/** decideCandidateApproval (docs/protocol.md, Approval of an exact tree). `own`: the tree named is the Candidate's. */
export function decide(m: Model, index: number, q: { kind: "granted" | "rejected"; own: boolean; by: string }): Answer {
  const c = m.candidates[index];
  if (!c) throw new Error(`no Candidate ${index}`);
  if (c.approval) {
    const same = c.approval.kind === q.kind && c.approval.by === q.by && q.own;
    if (same) return { kind: "decided", decision: q.kind, already: true };
    return { kind: "refused", code: "CONFLICT", reason: "already_decided" };
  }
  if (!(c.composed && gated(m, c)) || c.status !== "verified") return { kind: "refused", code: "PRECONDITION_FAILED" };
  if (!q.own) return { kind: "refused", code: "CONFLICT", reason: "tree_mismatch" };
  c.approval = { kind: q.kind, by: q.by };
  if (q.kind === "rejected") c.status = "rejected";
  return { kind: "decided", decision: q.kind, already: false };
}

/** What promotion's layer 1 blocks on (P2-P6), every kind at once. */
function blocksOf(m: Model, c: ModelCandidate): Block[] {
  const blocks = new Set<Block>();
  if (c.status !== "verified") blocks.add("status");
  if (!c.composed) blocks.add("plan").add("fork");
  else {
    if (c.evidence !== "pass") blocks.add("gap");
    if (gated(m, c) && c.approval?.kind !== "granted") blocks.add("approval");
  }
  return [...blocks].sort();
}

/** promoteCandidate (docs/protocol.md, Promotion): P1 first, then every block, then the compare-and-swap. */
export function promote(m: Model, index: number): Answer {
  const c = m.candidates[index];
  const change = c ? m.changes[c.change] : undefined;
  if (!c || !change) throw new Error(`no Candidate ${index}`);
  if (c.status === "promoted") return { kind: "alreadyPromoted", generation: m.landed.indexOf(index) + 1 };
  if (c.base < m.generation) {
    if (LIVE.includes(c.status)) c.status = "stale";
    return { kind: "stale", canonicalGeneration: m.generation };
  }
  const blocks = blocksOf(m, c);
  if (blocks.length > 0) return { kind: "blocked", blocks };
  m.generation += 1;
  m.landed.push(index);
  c.status = "promoted";
  // Only a verifying Change moves; a cancelled one stays so, its status is final (work-graph/statuses.ts).
  if (change.status === "verifying") change.status = "promoted";
  return { kind: "promoted", generation: m.generation };
}

/** cancelChange (docs/landing.md, Cancel): its open Candidates cancelled; a repeat answers the same. */
export function cancel(m: Model, change: number): Answer {
  const ch = m.changes[change];
  if (!ch) throw new Error(`no Change ${change}`);
  const own = (status: CandidateStatus) =>
    m.candidates.flatMap((c, i) => (c.change === change && c.status === status ? [i] : []));
  if (ch.status === "cancelled") return { kind: "cancelled", candidates: own("cancelled") };
  if (ch.status === "promoted") return { kind: "refused", code: "PRECONDITION_FAILED" };
  ch.status = "cancelled";
  const cancelled = m.candidates.flatMap((c, i) => (c.change === change && CANCELLABLE.includes(c.status) ? [i] : []));
  for (const i of cancelled) {
    const c = m.candidates[i];
    if (c) c.status = "cancelled";
  }
  return { kind: "cancelled", candidates: own("cancelled") };
}

/**
 * Two promotions at once: the result is that of one order or the other (the compare-and-swap
 * serialises them). Each order's answers and the model it leaves, `a` first, then `b` first.
 */
export function race(m: Model, a: number, b: number): { answers: [Answer, Answer]; model: Model }[] {
  const aFirst = structuredClone(m);
  const ab: [Answer, Answer] = [promote(aFirst, a), promote(aFirst, b)];
  const bFirst = structuredClone(m);
  const bAnswer = promote(bFirst, b);
  const ba: [Answer, Answer] = [promote(bFirst, a), bAnswer];
  return [
    { answers: ab, model: aFirst },
    { answers: ba, model: bFirst },
  ];
}

/** Replaces the model's contents with another's (fast-check hands commands the one model object). */
export function adopt(m: Model, next: Model): void {
  Object.assign(m, structuredClone(next));
}
