import { randomUUID } from "node:crypto";
import {
  buildVerificationPlan,
  candidateFork,
  canonicalRepo,
  changeInput,
  DomainError,
  humanGateApplies,
  type VerificationPlan,
} from "@rhumbatron/core";
import {
  activeVerificationPolicy,
  type CreateCandidateResult,
  cancelChange,
  createCandidate,
  createChange,
  decideCandidateApproval,
  finishCandidateVerification,
  loadVerificationInput,
  markCandidateComposed,
  type PromoteResult,
  promoteCandidate,
  type Recompose,
  recordEvidence,
  withRepoToken,
} from "@rhumbatron/db";
import { withTransaction } from "@rhumbatron/runtime";
import { composeChangeSets } from "../source/compose.ts";
import { describeConflict } from "../source/conflict-text.ts";
import { copyObjects, SYSTEM_AUTHOR } from "../source/git-objects.ts";
import { syncCanonical } from "../source/sync.ts";
import { storeSourceProbe } from "../verification/landing.ts";
import { evidenceFrom, refusalEvidence, verificationRun } from "../verification/verification-run.ts";
import { gateStep } from "../verification/workflow.ts";
import { checkInvariants, type RunState } from "./promotion-invariants.testing.ts";
import type { Risk } from "./promotion-model.testing.ts";
import { type ModelWorld, PERSON, poolSlot, TENANT } from "./promotion-world.testing.ts";

/**
 * Test support only: each command of the promotion model (docs/model-check.md) done for real, through
 * the functions the API and the worker call: createChange for a Change (its ChangeSets seeded as
 * rows, from the pool's commits); candidate.create's createCandidate and the verification
 * workflow's fork, composition, plan, Evidence and gate; decideCandidateApproval; promoteCandidate
 * and the source sync that fast-forwards main; cancelChange. Each answers in real IDs; a step
 * retried after a crash keeps what its first attempt got before it stopped (`Seen`).
 */
export type Composed = "verifying" | "conflict" | "as is";

export async function realCreate(
  w: ModelWorld,
  projectId: string,
  index: number,
  shape: { tasks: number; shared: boolean; risk: Risk },
): Promise<string> {
  const slots = Array.from({ length: shape.tasks }, (_, t) => poolSlot(w, index, t, shape.shared));
  const input = changeInput.parse({
    title: `Model Change ${index}`,
    riskTier: shape.risk,
    tasks: slots.map((s, t) => ({
      key: `t${t}`,
      title: `writes ${s.path}`,
      dependsOn: [],
      intents: { paths: [s.path], prefixes: [] },
    })),
  });
  const createdBy = { kind: "user" as const, id: PERSON };
  const request = { tenantId: TENANT, projectId, clientRequestId: `model-${randomUUID()}`, createdBy, input };
  const { changeId } = await createChange(w.db, request, w.deps);
  // Its Tasks done, each with its ChangeSet from the pool, and the Change verifying: the rows an
  // Agent's runs leave (seeded as the db tests seed them; composition reads only these).
  await withTransaction(w.db, async (ctx) => {
    const tasks = await ctx.tx.task.findMany({ where: { changeId }, orderBy: { position: "asc" } });
    const sets = slots.map((slot, t) => {
      const run = randomUUID();
      const task = tasks[t]?.id ?? "";
      return { id: `cs_${run}`, changeId, taskId: task, runId: `run_${run}`, agentId: PERSON, ...slot };
    });
    await ctx.tx.changeSet.createMany({
      data: sets.map(({ content: _, path, ...cs }) => ({ ...cs, baseCommit: w.pool.base, paths: [path] })),
    });
    await ctx.tx.task.updateMany({ where: { changeId }, data: { state: "completed" } });
    await ctx.tx.change.update({ where: { id: changeId }, data: { status: "verifying" } });
  });
  return changeId;
}

/**
 * Runs `attempt`; when the clock crashed it (the `crash`-th reading), the invariants must hold as
 * they stand, and the attempt runs again, as a redelivered command or a retried workflow step would.
 */
export async function withCrash(r: RunState, crash: number | null, attempt: () => Promise<unknown>): Promise<boolean> {
  const crashed = await r.world.clock.crashing(crash, attempt);
  if (!crashed) return false;
  r.stats.outcomes["crashed, then retried"] = (r.stats.outcomes["crashed, then retried"] ?? 0) + 1;
  await checkInvariants(r, null, 0, true);
  await attempt();
  return true;
}

/** What a step saw before a crash stopped it: the retry keeps it. */
export interface Seen<T> {
  first?: T;
}

/**
 * candidate.create (a composition, or a recomposition from a stale Candidate), then the verification
 * workflow's composition of the Candidate it made. A crash after the command committed leaves the
 * composition to the workflow's retry, as the worker's would (the command is acked by then).
 */
export async function realCompose(
  w: ModelWorld,
  changeId: string,
  recompose: Recompose | undefined,
  seen: Seen<CreateCandidateResult> & { after?: Composed },
): Promise<void> {
  seen.first ??= await withTransaction(w.db, (ctx) => createCandidate(ctx, changeId, w.deps, null, recompose));
  const candidateId = seen.first.candidateId;
  if (!candidateId) return;
  const after = await composeCandidate(w, candidateId);
  if (after !== "as is") seen.after ??= after;
}

/**
 * The workflow's steps fork, merge and composed (verification/workflow.ts) for a Candidate still
 * `created`: cand-<id> forked from canonical, its ChangeSets composed on its base there by the
 * composition itself (compose.ts; the merge step runs it in a working copy and pushes the result,
 * which this leaves out for speed), the plan under the project's active policy; a conflict is its
 * composition Evidence and the rejection, as the merge step records them.
 */
async function composeCandidate(w: ModelWorld, candidateId: string): Promise<Composed> {
  const input = await loadVerificationInput(w.db, candidateId);
  if (input?.candidate.status !== "created") return "as is";
  const { project, change, candidate } = input;
  const fork = candidateFork(candidateId);
  const canonical = canonicalRepo(project.id);
  await withRepoToken(w.db, { repo: canonical, mode: "read", purpose: `fork ${fork}` }, w.config, w.clock.now, (t) =>
    w.store.fork(canonical, t, fork),
  );
  const gitdir = w.store.gitdir(fork);
  for (const cs of input.changeSets) await copyObjects(w.store.gitdir(cs.fork), gitdir);
  const sets = input.changeSets.map((cs) => ({ ...cs, changeSetId: cs.id }));
  const merged = await composeChangeSets(gitdir, candidate.baseCommit, sets, {
    message: `${change.title}\n\nCandidate: ${candidateId}\n`,
    author: SYSTEM_AUTHOR,
    at: candidate.createdAt,
  });
  const ids = { candidateId, changeId: change.id };
  if (!merged.ok) {
    const lines = merged.conflicts.map(describeConflict);
    const refusal = refusalEvidence(candidateId, "composition", lines, w.clock.now());
    const gaps = lines.map((line) => `composition: merge conflict in ${line}`);
    await withTransaction(w.db, async (ctx) => {
      await recordEvidence(ctx, ids, refusal, w.deps);
      await finishCandidateVerification(ctx, ids, { status: "rejected", reason: "merge conflict", gaps }, w.deps);
    });
    return "conflict";
  }
  const policy = await activeVerificationPolicy(w.db, project.id, w.config);
  const goals = change.goals as { p95LatencyMs?: number };
  const plan = buildVerificationPlan(
    { riskTier: change.riskTier, invariants: change.invariants, goals },
    merged.paths,
    policy,
    w.config,
    w.checks,
  );
  const composed = { commit: merged.commit, tree: merged.tree, plan, approvalRequired: humanGateApplies(plan, policy) };
  await withTransaction(w.db, (ctx) => markCandidateComposed(ctx, { ...ids, ...composed }, w.deps));
  return "verifying";
}

/**
 * The rest of the verification workflow, with the checks' Evidence recorded directly (every planned
 * check passes, or the first fails): the gate step's verdict and the final state change.
 */
export async function realVerify(
  w: ModelWorld,
  candidateId: string,
  verdict: "pass" | "fail",
  seen: Seen<"verified" | "rejected">,
): Promise<void> {
  const input = await loadVerificationInput(w.db, candidateId);
  const plan = input?.candidate.plan as VerificationPlan | null | undefined;
  if (!input || !plan || !input.candidate.composedTree) throw new Error(`${candidateId} is not composed`);
  const at = w.clock.now();
  const ids = { candidateId, changeId: input.change.id };
  await withTransaction(w.db, async (ctx) => {
    for (const [i, check] of plan.checks.entries()) {
      const status = verdict === "fail" && i === 0 ? "fail" : "pass";
      const metrics = check.metric ? { [check.metric.name]: 0 } : {};
      const detail = "recorded by the model check";
      const e = evidenceFrom(candidateId, check, at, at, { status, coverage: "checked_supported", metrics, detail });
      await recordEvidence(ctx, ids, { ...e, completedAt: new Date(e.completedAt) }, w.deps);
    }
  });
  const v = verificationRun(w.verification, candidateId, input);
  const outcome = await gateStep(v, plan, input.candidate.composedTree);
  const moved = await withTransaction(w.db, (ctx) => finishCandidateVerification(ctx, ids, outcome, w.deps));
  if (moved && outcome.status !== "stale") seen.first ??= outcome.status;
}

export type Refusal = { refused: string; reason?: string };

/** A DomainError as the answer it is (its code, and its reason when it names one); anything else is thrown on. */
export async function orRefusal<T>(fn: () => Promise<T>): Promise<T | Refusal> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    const reason = err.details?.reason;
    return typeof reason === "string" ? { refused: err.code, reason } : { refused: err.code };
  }
}

/** An approver's decision on a tree (a rejection with its note); a refusal is its code and reason. */
export function realDecide(
  w: ModelWorld,
  candidateId: string,
  q: { kind: "granted" | "rejected"; treeHash: string; by: string },
) {
  const note = q.kind === "rejected" ? "not this tree" : null;
  const decision = { kind: q.kind, treeHash: q.treeHash, userId: q.by, note };
  return orRefusal(() => decideCandidateApproval(w.db, { tenantId: TENANT, candidateId, ...decision }, w.deps));
}

/**
 * promoteCandidate, then the source sync its index.build asks for (indexer/index.ts runs it first):
 * main fast-forwarded to the generation it answered. `seen` keeps the first answer.
 */
export async function realPromote(
  w: ModelWorld,
  projectId: string,
  candidateId: string,
  seen: Seen<PromoteResult> & { again?: PromoteResult },
): Promise<void> {
  const r = await promoteCandidate(
    w.db,
    { tenantId: TENANT, candidateId, actorId: PERSON },
    w.deps,
    storeSourceProbe(w.deps),
  );
  if (seen.first) seen.again = r;
  else seen.first = r;
  if (r.outcome === "promoted" || r.outcome === "alreadyPromoted") await syncCanonical(w.deps, projectId, r.generation);
}

/** The person's cancel of a Change; a refusal is its code. */
export function realCancel(w: ModelWorld, changeId: string) {
  return orRefusal(() =>
    cancelChange(w.db, { tenantId: TENANT, changeId, actorId: PERSON, reason: "the model cancels it" }, w.deps),
  );
}
