import {
  candidateFork,
  canonicalRepo,
  DomainError,
  dirForCandidate,
  gateRequiredChecks,
  type PlannedCheck,
  type VerificationPlan,
} from "@rhumbatron/core";
import {
  type ClaimedWorkflow,
  evidenceOf,
  finishCandidateVerification,
  finishCheckRerun,
  finishWorkflowInstance,
  loadVerificationInput,
  recordEvidence,
  reserveSandboxSeconds,
  type SandboxReservation,
  settleSandbox,
  type VerificationOutcome,
  withRepoToken,
  workflowRun,
} from "@rhumbatron/db";
import { checkStep, leaseSeconds, merge, type VerificationDeps, type VerificationRunResult } from "./workflow.ts";

/**
 * A check rerun (README: Landing, "Rerun a check"): one planned check of a rejected Candidate runs
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
  const run = workflowRun(deps.db, rerunId, { now: deps.now, leaseSeconds: leaseSeconds(deps.config) });
  const input = await loadVerificationInput(deps.db, candidateId);
  const end = async (outcome: string, detail?: string) => {
    await finishWorkflowInstance(deps.db, rerunId, { status: "succeeded", output: { status: outcome } }, deps.now());
    return { candidateId, outcome, ...(detail ? { detail } : {}) };
  };
  if (!input) {
    await finishWorkflowInstance(deps.db, rerunId, { status: "failed", error: "no such Candidate" }, deps.now());
    return { candidateId, outcome: "failed", detail: "no such Candidate" };
  }
  const { candidate, project } = input;
  const ids = { candidateId, changeId: candidate.changeId, eventKey: rerunId };
  const finish = async (o: VerificationOutcome) => {
    await run.txStep("finish", async (ctx) => {
      const moved = await finishCandidateVerification(ctx, ids, o, deps);
      await finishCheckRerun(ctx, rerunId, o.status, deps.now());
      return moved;
    });
    return end(o.status, "reason" in o ? o.reason : undefined);
  };

  // Cancelled (or otherwise moved on) since the rerun was asked for: nothing to do.
  if (candidate.status !== "verifying") {
    await run.txStep("finish", (ctx) => finishCheckRerun(ctx, rerunId, `skipped: ${candidate.status}`, deps.now()));
    return end("skipped", `the Candidate is ${candidate.status}`);
  }
  if (candidate.baseGeneration !== project.canonicalGeneration) {
    return finish({ status: "stale", canonicalGeneration: project.canonicalGeneration });
  }
  const plan = candidate.plan as VerificationPlan | null;
  const check = plan?.checks.find((c) => c.id === checkId);
  if (!plan || !check || !candidate.composedCommit) {
    return finish({ status: "rejected", reason: `the Candidate has no planned check ${checkId} to rerun`, gaps: [] });
  }

  const reserved = await run.step("reserve", async () => {
    try {
      const r = await reserveSandboxSeconds(
        deps.db,
        { kind: "candidate", id: `sbxres_${rerunId}`, changeId: candidate.changeId },
        deps.config,
        deps.now(),
      );
      return { ok: true as const, reservation: r, at: deps.now().toISOString() };
    } catch (err) {
      if (err instanceof DomainError && err.code === "PRECONDITION_FAILED")
        return { ok: false as const, reason: err.message };
      throw err;
    }
  });
  if (!reserved.ok) return finish({ status: "rejected", reason: `no Sandbox budget: ${reserved.reason}`, gaps: [] });

  const ws = await deps.sandbox.open({ projectId: project.id, dirName: dirForCandidate(candidate.id) });
  try {
    const commit = candidate.composedCommit;
    await run.step("restore", () => restoreComposition(deps, input, ws, commit));
    const evidence = await run.step(`check:${check.id}`, () =>
      checkStep(deps, input, ws, commit, check as PlannedCheck, rerunTag(rerunId)),
    );
    await run.txStep(`evidence:${check.id}`, (ctx) =>
      recordEvidence(ctx, ids, { ...evidence, completedAt: new Date(evidence.completedAt) }, deps),
    );
  } finally {
    await run.step("settle", () =>
      settleSandbox(
        deps.db,
        reserved.reservation as SandboxReservation,
        {
          wallSeconds: Math.ceil((deps.now().getTime() - new Date(reserved.at).getTime()) / 1000),
          billing: deps.sandbox.billing,
        },
        deps.config,
      ),
    );
    await ws.remove().catch(() => {});
  }

  const gate = gateRequiredChecks(plan, await evidenceOf(deps.db, candidate.id));
  if (gate.promotable) {
    return finish({
      status: "verified",
      gate,
      // Decided when the Candidate was composed (the plan and the policy have not changed since).
      humanGate: candidate.approvalRequired,
      treeHash: candidate.composedTree ?? "",
    });
  }
  return finish({
    status: "rejected",
    reason: `${gate.gaps.length} required check${gate.gaps.length === 1 ? "" : "s"} not satisfied`,
    gaps: gate.gaps.map((g) => `${g.checkId}: ${g.gap} (${g.detail})`),
    gate,
  });
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
