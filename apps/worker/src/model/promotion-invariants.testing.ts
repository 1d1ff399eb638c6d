import assert from "node:assert/strict";
import type { GitOracle } from "./git-oracle.testing.ts";
import type { Model } from "./promotion-model.testing.ts";
import type { ModelWorld } from "./promotion-world.testing.ts";

/**
 * Test support only: one run of the promotion model against the real system, and what must hold
 * after every command (docs/model-check.md, Invariants), read from the real rows and from
 * command-line git on the canonical repository, the oracle that shares no code with the product.
 */
export interface RunState {
  world: ModelWorld;
  projectId: string;
  /** Command-line git on the project's canonical repository. */
  git: GitOracle;
  /** The real IDs of the model's Changes and Candidates, by index. */
  changes: string[];
  candidates: string[];
  /** Canonical's generation after the last command: each promotion moves it by exactly one. */
  generation: number;
  /** Every Candidate seen rejected or cancelled: none of them may ever land. */
  closed: Set<string>;
  /** Each command run so far, with what it acted on and what it answered. */
  trace: string[];
  stats: RunStats;
}

/** What the runs did, over all of them: commands run, how often each kind of answer came, where the time went (ms). */
export interface RunStats {
  commands: number;
  outcomes: Record<string, number>;
  ms: Record<string, number>;
}

/** The model's index of a real Candidate, a new index when it was not known yet. */
export function candidateIndex(r: RunState, id: string): number {
  if (!r.candidates.includes(id)) r.candidates.push(id);
  return r.candidates.indexOf(id);
}

async function readReal(r: RunState) {
  const db = r.world.db;
  const [project, generations, candidates, changes, main] = await Promise.all([
    db.project.findUniqueOrThrow({ where: { id: r.projectId }, select: { canonicalGeneration: true } }),
    db.canonicalGeneration.findMany({ where: { projectId: r.projectId }, orderBy: { generation: "asc" } }),
    db.candidate.findMany({ where: { projectId: r.projectId }, include: { approval: true } }),
    db.change.findMany({ where: { projectId: r.projectId }, select: { id: true, status: true } }),
    // main's first-parent history, oldest first: S0's commit, then one commit per generation it reached.
    r.git.firstParents(),
  ]);
  return { generation: project.canonicalGeneration, generations, candidates, changes, main };
}
type Real = Awaited<ReturnType<typeof readReal>>;

/**
 * The invariants after a command. `promotions`: how many promotions the command answered. After a
 * crash, before its retry (`crashed`), main may still lag behind the generation the promotion wrote
 * (the source sync did not run yet) and the model is not compared.
 */
export async function checkInvariants(r: RunState, m: Model | null, promotions: number, crashed = false) {
  const s = await readReal(r);
  const commits = s.generations.map((g) => g.commit);
  if (crashed) assert.ok(s.generation - r.generation <= 1, "a crashed promotion advanced canonical more than once");
  else assert.equal(s.generation - r.generation, promotions, "each promotion advances the generation by exactly one");
  assert.deepEqual(
    s.generations.map((g) => g.generation),
    Array.from({ length: s.generation + 1 }, (_, i) => i),
    "the canonical generations are 0..n with no gap",
  );
  assert.deepEqual(s.main, commits.slice(0, s.main.length), "main's first-parent history is the generations' commits");
  if (!crashed) assert.equal(s.main.at(-1), commits.at(-1), "main is the newest generation's commit");
  landedCandidates(r, s);
  approvalsForExactTrees(s);
  if (crashed) return;
  r.generation = s.generation;
  if (m) sameAsModel(r, m, s);
}

/** Each generation names its own promoted Candidate, on the one before, at its composed commit; no other is promoted. */
function landedCandidates(r: RunState, s: Real) {
  const byId = new Map(s.candidates.map((c) => [c.id, c]));
  const landed = s.generations.slice(1).map((g) => {
    const c = g.candidateId ? byId.get(g.candidateId) : undefined;
    assert.ok(c, `S${g.generation} names no Candidate of the project`);
    assert.equal(c.status, "promoted", `S${g.generation}'s Candidate is promoted`);
    assert.equal(c.promotedGeneration, g.generation, `S${g.generation}'s Candidate was promoted to it`);
    assert.equal(
      c.baseGeneration,
      g.generation - 1,
      `S${g.generation}'s Candidate was composed on S${g.generation - 1}`,
    );
    assert.equal(c.composedCommit, g.commit, `main's S${g.generation} is its Candidate's composed commit`);
    assert.equal(c.composedTree, g.tree, `S${g.generation}'s tree is its Candidate's composed tree`);
    const change = s.changes.find((x) => x.id === c.changeId);
    assert.equal(
      change?.status,
      "promoted",
      `S${g.generation}'s Change is promoted (nothing of a cancelled Change lands)`,
    );
    return c.id;
  });
  assert.equal(new Set(landed).size, landed.length, "no Candidate lands on two generations");
  const promoted = s.candidates.filter((c) => c.status === "promoted").map((c) => c.id);
  assert.deepEqual(promoted.sort(), [...landed].sort(), "no two Candidates land on one generation");
  for (const c of s.candidates) if (c.status === "rejected" || c.status === "cancelled") r.closed.add(c.id);
  for (const id of r.closed) assert.ok(!landed.includes(id), `${id} was rejected or cancelled and landed`);
}

/** An approval counts only for the exact tree it names: every one names its Candidate's tree; a gated landing had one. */
function approvalsForExactTrees(s: Real) {
  for (const c of s.candidates) {
    if (c.approval) assert.equal(c.approval.treeHash, c.composedTree, `${c.id}'s approval names its composed tree`);
    if (c.status === "promoted" && c.approvalRequired) {
      assert.equal(c.approval?.decision, "granted", `${c.id} behind the human gate landed with an approval`);
    }
  }
}

/** The real rows say what the model says: the generation, who landed, every Change's and Candidate's status. */
function sameAsModel(r: RunState, m: Model, s: Real) {
  const status = new Map<string, string>([...s.candidates, ...s.changes].map((x) => [x.id, x.status]));
  assert.equal(s.generation, m.generation, "canonical's generation is the model's");
  assert.deepEqual(
    s.generations.slice(1).map((g) => g.candidateId),
    m.landed.map((i) => r.candidates[i]),
    "the Candidates that landed are the model's, in its order",
  );
  assert.deepEqual(
    s.candidates.map((c) => c.id).sort(),
    [...r.candidates].sort(),
    "the project has the model's Candidates, no other",
  );
  assert.deepEqual(
    r.candidates.map((id) => status.get(id)),
    m.candidates.map((c) => c.status),
    "every Candidate's status is the model's",
  );
  assert.deepEqual(
    r.changes.map((id) => status.get(id)),
    m.changes.map((c) => c.status),
    "every Change's status is the model's",
  );
}
