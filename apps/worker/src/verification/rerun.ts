import { candidateFork, canonicalRepo, dirForCandidate, type VerificationPlan } from "@rhumbatron/core";
import { finishCheckRerun, loadVerificationInput, withRepoToken } from "@rhumbatron/db";
import { type ClaimedWorkflow, finishWorkflowInstance } from "@rhumbatron/runtime";
import { merge } from "./composition.ts";
import { type VerificationDeps, type VerificationRunResult, verificationRun } from "./verification-run.ts";
import { checkAndRecordStep, gateStep, reserveStep, settleStep } from "./workflow.ts";

/**
 * A check rerun (docs/landing.md, "Rerun a check"): one planned check of a rejected Candidate runs
 * again on the same composed commit, in its own workflow instance (ID = the rerun's ID, so it runs
 * once). Its Evidence (`ev_…_<check>_r<n>`) sits beside the earlier records; the gate reads the latest
 * record of every check and the Candidate ends verified or rejected again, with Events keyed by the
 * rerun. Steps: load -> still verifying? -> still on canonical? -> reserve -> restore the composed
 * commit (composed again, deterministically, when the Candidate's fork was swept) -> the check ->
 * Evidence -> gate -> finish -> settle.
 */
export async function runCheckRerun(deps: VerificationDeps, claimed: ClaimedWorkflow): Promise<VerificationRunResult> {
  const rerunId = claimed.instanceId;
  const { candidateId, checkId } = claimed.input as { candidateId: string; checkId: string };
  const input = await loadVerificationInput(deps.db, candidateId);
  if (!input) {
    await finishWorkflowInstance(deps.db, rerunId, { status: "failed", error: "no such Candidate" }, deps.now());
    return { candidateId, outcome: "failed", detail: "no such Candidate" };
  }
  const v = verificationRun(deps, rerunId, input, (ctx, status) => finishCheckRerun(ctx, rerunId, status, deps.now()));
  const { candidate, project } = input;
  // Cancelled (or otherwise moved on) since the rerun was asked for: nothing to do.
  if (candidate.status !== "verifying") {
    await v.run.txStep("finish", (ctx) => finishCheckRerun(ctx, rerunId, `skipped: ${candidate.status}`, deps.now()));
    return v.skip(`the Candidate is ${candidate.status}`);
  }
  if (candidate.baseGeneration !== project.canonicalGeneration) {
    return v.finish({ status: "stale", canonicalGeneration: project.canonicalGeneration });
  }
  const plan = candidate.plan as VerificationPlan | null;
  const check = plan?.checks.find((c) => c.id === checkId);
  const commit = candidate.composedCommit;
  if (!plan || !check || !commit) {
    return v.finish({ status: "rejected", reason: `the Candidate has no planned check ${checkId} to rerun`, gaps: [] });
  }
  const reserved = await reserveStep(v);
  if (!reserved.ok) return v.finish({ status: "rejected", reason: `no Sandbox budget: ${reserved.reason}`, gaps: [] });
  const ws = await deps.sandbox.open({ projectId: project.id, dirName: dirForCandidate(candidate.id) });
  try {
    await v.run.step("restore", () => restoreComposition(deps, input, ws, commit));
    await checkAndRecordStep(v, ws, commit, check, { tag: rerunTag(rerunId) });
  } finally {
    await settleStep(v, reserved);
    await ws.remove().catch(() => {});
  }
  // The human gate was decided when the Candidate was composed (its plan has not changed since).
  return v.finish(await gateStep(v, plan, candidate.composedTree ?? "", candidate.approvalRequired));
}

/** `rerun_<cand>_<check>_<n>` -> `r<n>`. */
const rerunTag = (rerunId: string) => `r${rerunId.slice(rerunId.lastIndexOf("_") + 1)}`;

/**
 * The composed commit, checked out in the Candidate's run directory. When the Candidate's fork was
 * swept, the fork is made again from canonical and the ChangeSets composed again: composition is
 * deterministic, so it is the same commit (checked).
 */
async function restoreComposition(
  deps: VerificationDeps,
  input: Parameters<typeof merge>[1],
  ws: Parameters<typeof merge>[2],
  commit: string,
): Promise<{ restored: "fork" | "recomposed" }> {
  const fork = candidateFork(input.candidate.id);
  const has = await withRepoToken(deps.db, { repo: fork, mode: "read", purpose: "rerun" }, deps.config, deps.now, (t) =>
    deps.source.hasCommit(fork, t, commit),
  );
  if (has) return { restored: "fork" };
  const canonical = canonicalRepo(input.project.id);
  await withRepoToken(deps.db, { repo: canonical, mode: "read", purpose: `fork ${fork}` }, deps.config, deps.now, (t) =>
    deps.source.fork(canonical, t, fork),
  );
  const merged = await merge(deps, input, ws, fork);
  if (!merged.ok || merged.commit !== commit) {
    throw new Error(
      `the Candidate's fork was swept and composing it again gave ${merged.ok ? merged.commit : merged.reason}, not ${commit}`,
    );
  }
  return { restored: "recomposed" };
}
