import {
  buildVerificationPlan,
  candidateFork,
  candidateStatusIn,
  checkCompatibility,
  DomainError,
  dirForCandidate,
  humanGateApplies,
  type PlannedCheck,
  type ProjectChecks,
  type SandboxWorkspace,
  type VerificationPlan,
} from "@rhumbatron/core";
import {
  activeVerificationPolicy,
  baseStands,
  failureMayBeBelow,
  loadVerificationInput,
  markCandidateComposed,
  readGate,
  recordEvidence,
  reserveSandboxSeconds,
  type SandboxReservation,
  settleSandbox,
  type VerificationOutcome,
  withRepoToken,
} from "@rhumbatron/db";
import { finishWorkflowInstance } from "@rhumbatron/runtime";
import { runPlannedChecks } from "./check-pool.ts";
import { type CheckRunOptions, checkStep } from "./check-step.ts";
import { CandidateClosed, watchCandidateClosed } from "./closed-watch.ts";
import { composable, ensureWorkingCopy, type Merged, merge } from "./composition.ts";
import { conflictReviewStep } from "./conflict-review.ts";
import { prefetchBaseRouteTable } from "./contract-base.ts";
import { culpritStep } from "./culprit.ts";
import { baseRepo, checksStep, requiresStep, setupStep } from "./project-steps.ts";
import { recordReusedStep, reuseStep } from "./reuse.ts";
import {
  refusalEvidence,
  type VerificationDeps,
  type VerificationRun,
  type VerificationRunResult,
  verificationRun,
} from "./verification-run.ts";

/** How often a verification reads whether its Candidate was closed while checks run. */
const CLOSED_POLL_MS = 2_000;

/**
 * CandidateVerificationWorkflow (docs/verification.md; its steps are charted
 * in docs/workflows.md): one instance per Candidate, every step recorded so a re-run replays it,
 * every check its own step with its own timeout. Its one model call is the conflict review, only
 * when two Tasks changed the same file (conflict-review.ts); the model decides nothing by itself.
 * load -> final already? -> base still canonical? -> compatibility -> fork cand-<id> -> reserve
 * Sandbox seconds -> merge the ChangeSets in Work Graph order in the Candidate's Sandbox run
 * directory -> plan, verifying, candidate.composed -> conflict review -> one step per check
 * (Evidence rows, output blobs; `build` first, the others at once, each in its own copy of the built
 * tree: check-pool.ts) -> gate -> verified (+ approval.requested) or rejected -> settle.
 */

export async function runVerification(deps: VerificationDeps, instanceId: string): Promise<VerificationRunResult> {
  const input = await loadVerificationInput(deps.db, instanceId);
  if (!input) {
    await finishWorkflowInstance(deps.db, instanceId, { status: "failed", error: "no such Candidate" }, deps.now());
    return { candidateId: instanceId, outcome: "failed", detail: "no such Candidate" };
  }
  const v = verificationRun(deps, instanceId, input);
  const { candidate, project } = input;
  if (candidateStatusIn(candidate.status, "settled")) return v.skip(`already ${candidate.status}`);
  // Canonical at its generation, or (stacked) a Candidate below it still in play (docs/landing.md).
  if (!(await baseStands(deps.db, candidate, project.canonicalGeneration))) {
    return v.finish({ status: "stale", canonicalGeneration: project.canonicalGeneration });
  }
  const incompatible = await compatibilityStep(v);
  if (incompatible) return v.finish(incompatible);
  const checks = await checksStep(v);
  if (!checks.ok) return v.finish(checks.outcome);
  await forkStep(v);
  const reserved = await reserveStep(v);
  if (!reserved.ok) return v.finish({ status: "rejected", reason: `no Sandbox budget: ${reserved.reason}`, gaps: [] });
  const ws = await deps.sandbox.open({ projectId: project.id, dirName: dirForCandidate(candidate.id) });
  const done = async (o: VerificationOutcome) => {
    await settleStep(v, reserved);
    await ws.remove().catch(() => {});
    return v.finish(o);
  };
  const merged = await mergeStep(v, ws);
  if (!merged.ok) return done(merged.outcome);
  const plan = await planStep(v, merged, checks.project);
  const unmet = await requiresStep(v, ws, plan);
  if (unmet) return done(unmet);
  const setup = await setupStep(v, ws, checks.project);
  if (setup) return done(setup);
  await conflictReviewStep(v, merged, () => composable(deps, input.changeSets));
  // A Candidate closed while its checks run (its Change cancelled, or it went stale) stops them at
  // once; nothing more is recorded for it, so a stopped check is never Evidence of a failure.
  // Checks whose inputs match a recorded pass of this project reuse it (reuse.ts); the others run.
  const reuse = await reuseStep(v, ws, plan, checks.project, merged.tree);
  const toRun = plan.checks.filter((c) => !reuse.reuse[c.id]);
  for (const check of plan.checks) {
    const from = reuse.reuse[check.id];
    if (from) await recordReusedStep(v, check, reuse.keys[check.id] ?? "", from);
  }
  const watch = watchCandidateClosed(deps.db, candidate.id, CLOSED_POLL_MS);
  const checked = watch.workspace(ws);
  try {
    const ahead = await prefetchBaseRouteTable(v, checked, toRun);
    await runPlannedChecks(
      {
        config: deps.config,
        recorded: async (check) => (await v.run.done(`evidence:${check.id}`)) !== null,
        record: (own, check) =>
          checkAndRecordStep(v, own, merged.commit, check, {
            closed: watch.check,
            inputsKey: reuse.keys[check.id] ?? null,
            ...(ahead ? { baseRouteTable: ahead.table } : {}),
          }),
        restore: () => ensureWorkingCopy(deps, ws, candidateFork(candidate.id), merged.commit),
      },
      checked,
      toRun,
    );
    watch.check();
  } catch (err) {
    if (!(err instanceof CandidateClosed)) throw err;
    await settleStep(v, reserved);
    await ws.remove().catch(() => {});
    return v.skip(err.message);
  } finally {
    watch.stop();
  }
  const verdict = await stackedVerdict(v, await gateStep(v, plan, merged.tree));
  // A failed check of a Change of several Tasks: which Task's ChangeSet broke it (culprit.ts).
  return done(await culpritStep(v, plan, checks.project, verdict));
}

/**
 * A stacked Candidate that fails while the one below it has not passed may be failing for that
 * one's sake: it is not rejected, but composed again once that one has left the stack (packages/db/src/work-graph/stack.ts).
 * Below verified (or landed), the failure is this Change's on the tree it would land as.
 */
async function stackedVerdict(v: VerificationRun, o: VerificationOutcome): Promise<VerificationOutcome> {
  const below = v.input.candidate.stackedOn;
  if (o.status !== "rejected" || !below) return o;
  const generation = await failureMayBeBelow(v.deps.db, v.input.candidate);
  return generation === null ? o : { status: "stale", canonicalGeneration: generation, waitsForBelow: below };
}

/** Step `compatibility`: what each ChangeSet does to each file; an incompatible set is rejected with Evidence. */
async function compatibilityStep(v: VerificationRun): Promise<VerificationOutcome | null> {
  const { deps, run, input, ids } = v;
  const compat = await run.step("compatibility", async () =>
    checkCompatibility(await composable(deps, input.changeSets)),
  );
  if (compat.status !== "incompatible") return null;
  const lines = compat.conflicts.map((c) => `${c.path}: ${c.reason}`);
  await run.txStep("evidence:composition", (ctx) =>
    recordEvidence(ctx, ids, refusalEvidence(ids.candidateId, "composition", lines, deps.now()), deps),
  );
  return {
    status: "rejected",
    reason: "the ChangeSets cannot be composed",
    gaps: compat.conflicts.map((c) => `composition: ${c.path} ${c.reason}`),
  };
}

/**
 * Step `fork`: the Candidate's own repository, cand-<id>, forked from the repository that holds its
 * base: canonical, or for a stacked Candidate the fork of the one below it (baseRepo).
 */
async function forkStep(v: VerificationRun): Promise<void> {
  const { deps, input } = v;
  const fork = candidateFork(input.candidate.id);
  await v.run.step("fork", async () => {
    const from = await baseRepo(deps, input);
    await withRepoToken(
      deps.db,
      { repo: from, mode: "read", purpose: `fork ${fork}` },
      deps.config,
      deps.now,
      (token) => deps.source.fork(from, token, fork),
    );
    return { fork, from };
  });
}

export type Reserved = { ok: true; reservation: SandboxReservation; at: string } | { ok: false; reason: string };

/** Step `reserve`: the Candidate's Sandbox seconds (stable ID sbxres_<candidate>); a refusal is a rejection. */
export function reserveStep(v: VerificationRun): Promise<Reserved> {
  const { deps } = v;
  return v.run.step("reserve", async (): Promise<Reserved> => {
    try {
      const r = await reserveSandboxSeconds(
        deps.db,
        { kind: "candidate", id: v.reservationId, changeId: v.ids.changeId },
        deps.config,
        deps.now(),
      );
      return { ok: true, reservation: r, at: deps.now().toISOString() };
    } catch (err) {
      if (err instanceof DomainError && err.code === "PRECONDITION_FAILED") return { ok: false, reason: err.message };
      throw err;
    }
  });
}

/** Step `settle`: the meter charges what the Candidate's Sandbox ran. */
export function settleStep(v: VerificationRun, reserved: Extract<Reserved, { ok: true }>) {
  const { deps } = v;
  return v.run.step("settle", () =>
    settleSandbox(
      deps.db,
      reserved.reservation,
      {
        wallSeconds: Math.ceil((deps.now().getTime() - new Date(reserved.at).getTime()) / 1000),
        billing: deps.sandbox.billing,
      },
      deps.config,
    ),
  );
}

type MergeStepResult =
  | (Extract<Merged, { ok: true }> & { ok: true })
  | { ok: false; outcome: Extract<VerificationOutcome, { status: "rejected" | "stale" }> };

/** Step `merge`: the ChangeSets composed on the base; a conflict is a rejection with composition Evidence. */
async function mergeStep(v: VerificationRun, ws: SandboxWorkspace): Promise<MergeStepResult> {
  const { deps, run, input, ids } = v;
  const merged = await run.step("merge", () => merge(deps, input, ws, candidateFork(ids.candidateId)));
  if (merged.ok) return merged;
  const below = input.candidate.stackedOn;
  if (below) {
    // It conflicts with what is below it in the stack, which has not landed: not its Tasks' fault
    // yet. It is composed again once that one has left the stack (packages/db/src/work-graph/stack.ts).
    return {
      ok: false,
      outcome: { status: "stale", canonicalGeneration: input.project.canonicalGeneration, waitsForBelow: below },
    };
  }
  await run.txStep("evidence:composition", (ctx) =>
    recordEvidence(ctx, ids, refusalEvidence(ids.candidateId, "composition", merged.lines, deps.now()), deps),
  );
  return {
    ok: false,
    outcome: {
      status: "rejected",
      reason: "merge conflict",
      gaps: merged.lines.map((line) => `composition: merge conflict in ${line}`),
      conflictTasks: merged.tasks ?? [],
    },
  };
}

/**
 * Step `composed`: the Verification Plan for the composed paths under the project's active policy
 * (the plan records its version; promotion refuses a plan whose version is no longer active); the
 * Candidate is verifying. `deps.policy`, when a test sets one, stands in for the project's.
 */
function planStep(
  v: VerificationRun,
  merged: Extract<Merged, { ok: true }>,
  project: ProjectChecks,
): Promise<VerificationPlan> {
  const { deps, input, ids } = v;
  return v.run.txStep("composed", async (ctx) => {
    const policy = deps.policy ?? (await activeVerificationPolicy(ctx.tx, input.project.id, deps.config));
    const p = buildVerificationPlan(
      {
        riskTier: input.change.riskTier,
        invariants: input.change.invariants,
        goals: input.change.goals as { p95LatencyMs?: number },
      },
      merged.paths,
      policy,
      deps.config,
      project,
    );
    await markCandidateComposed(
      ctx,
      { ...ids, commit: merged.commit, tree: merged.tree, plan: p, approvalRequired: humanGateApplies(p, policy) },
      deps,
    );
    return p;
  });
}

/**
 * Steps `check:<id>` and `evidence:<id>`: one planned check run, its Evidence recorded with its
 * Event. A check stopped because its Candidate closed records nothing (closed-watch.ts): it throws
 * CandidateClosed out of both steps.
 */
export async function checkAndRecordStep(
  v: VerificationRun,
  ws: SandboxWorkspace,
  commit: string,
  check: PlannedCheck,
  o: CheckRunOptions = {},
) {
  const { deps, run, input, ids } = v;
  const evidence = await run.step(`check:${check.id}`, () => checkStep(deps, input, ws, commit, check, o));
  o.closed?.();
  await run.txStep(`evidence:${check.id}`, (ctx) =>
    recordEvidence(
      ctx,
      ids,
      { ...evidence, inputsKey: o.inputsKey ?? null, completedAt: new Date(evidence.completedAt) },
      deps,
    ),
  );
}

/** The gate over the latest record of every required check: verified (maybe behind the human gate) or rejected. */
export async function gateStep(
  v: VerificationRun,
  plan: VerificationPlan,
  tree: string,
  // The plan's gate already holds what its policy asks (humanGateApplies under the plan's own policy).
  humanGate = plan.humanGate,
): Promise<VerificationOutcome> {
  // A conflict review's supported blocking finding is a gap too (docs/verification.md, Conflict
  // reviews), and so
  // is a command or program Agent's edit outside its Task's declared paths (db readGate).
  const gate = await readGate(v.deps.db, v.input.candidate, plan);
  if (gate.promotable) return { status: "verified", gate, humanGate, treeHash: tree };
  if (plan.checks.length === 0) {
    // Nothing ran, so nothing is verified: the project declares no check that applies to this Change.
    return {
      status: "rejected",
      reason: "no check applies to this Change: its checks file applies none and its policy requires none",
      gaps: ["checks: none applies; give a check without `when`, or a rule that holds for this Change"],
      gate,
    };
  }
  const findings = gate.gaps.filter((g) => g.gap === "blocking_finding").length;
  const outside = gate.gaps.filter((g) => g.gap === "outside_paths").length;
  const checks = gate.gaps.length - findings - outside;
  const s = (n: number) => (n === 1 ? "" : "s");
  return {
    status: "rejected",
    reason: [
      checks ? `${checks} required check${s(checks)} not satisfied` : "",
      findings ? `${findings} blocking conflict-review finding${s(findings)}` : "",
      outside
        ? `${outside} ChangeSet${s(outside)} edited outside ${outside === 1 ? "its Task's" : "their Tasks'"} declared paths`
        : "",
    ]
      .filter(Boolean)
      .join("; "),
    gaps: gate.gaps.map((g) => `${g.checkId}: ${g.gap} (${g.detail})`),
    gate,
  };
}
