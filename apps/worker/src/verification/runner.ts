import {
  finishCandidateVerification,
  finishCheckRerun,
  loadVerificationInput,
  type SandboxReservation,
  settleSandbox,
  WORKFLOWS,
} from "@rhumbatron/db";
import {
  claimWorkflowInstance,
  doneWorking,
  finishWorkflowInstance,
  releaseWorkflowLease,
  type WorkflowRun,
  workflowRun,
} from "@rhumbatron/runtime";
import { runCheckRerun } from "./rerun.ts";
import { leaseSeconds, type VerificationDeps, type VerificationRunResult } from "./verification-run.ts";
import { runVerification } from "./workflow.ts";

/**
 * The verification runner: claims CandidateVerificationWorkflow instances, then check reruns, and
 * runs each. A crashed runner's instance is picked up by another as soon as the crashed one's
 * heartbeat stops (or its lease lapses). An instance that kept failing is given up: its Candidate
 * is rejected with why and its meter settled. `runner` is the claiming worker's ID. An instance whose
 * run failed before it could let go is this runner's to take again at once (leases/working.ts).
 */
export async function drainVerifications(
  deps: VerificationDeps,
  runner = "verification-runner",
  max = 5,
): Promise<VerificationRunResult[]> {
  const results: VerificationRunResult[] = [];
  const claim = (kind: "verification" | "rerun") =>
    claimWorkflowInstance(deps.db, WORKFLOWS[kind], {
      now: deps.now(),
      leaseSeconds: leaseSeconds(deps.config),
      owner: runner,
      takeoverSeconds: deps.config.worker.takeoverSeconds,
    });
  const exhausted = (attempts: number) => attempts > deps.config.queues.policies.verification.maxRetries + 1;
  const failures: string[] = [];
  const working = async (instanceId: string, run: () => Promise<VerificationRunResult>) => {
    try {
      results.push(await run());
    } catch (err) {
      // One instance that cannot run now does not hold up the rest of the drain: it is tried again
      // after a while (its attempts count, and past its retries it is given up), and the drain
      // still fails at its end, saying which.
      failures.push(`${instanceId}: ${err instanceof Error ? err.message : String(err)}`);
      await releaseWorkflowLease(deps.db, instanceId, new Date(deps.now().getTime() + RETRY_AFTER_MS));
    } finally {
      doneWorking(runner, "workflow", [instanceId], deps.now());
    }
  };
  for (let i = 0; i < max; i++) {
    const claimed = await claim("verification");
    if (!claimed) break;
    await working(claimed.instanceId, () =>
      exhausted(claimed.attempts)
        ? giveUp(deps, claimed.instanceId, `stopped after ${claimed.attempts - 1} attempts`)
        : runVerification(deps, claimed.instanceId),
    );
  }
  // Check reruns run on the same runner (and its nudge channel), after first verifications.
  for (let i = 0; i < max; i++) {
    const claimed = await claim("rerun");
    if (!claimed) break;
    await working(claimed.instanceId, () =>
      exhausted(claimed.attempts)
        ? giveUp(
            deps,
            claimed.instanceId,
            `stopped after ${claimed.attempts - 1} attempts`,
            String(claimed.input.candidateId),
          )
        : runCheckRerun(deps, claimed),
    );
  }
  if (failures.length > 0) throw new Error(`verification could not run: ${failures.join("; ")}`);
  return results;
}

/** How long an instance whose run threw waits before it is claimed again. */
const RETRY_AFTER_MS = 30_000;

/**
 * A Candidate whose verification (or check rerun: instance ID = rerun ID) kept failing is rejected,
 * with why; its meter is settled.
 */
async function giveUp(
  deps: VerificationDeps,
  instanceId: string,
  why: string,
  candidateId = instanceId,
): Promise<VerificationRunResult> {
  const run: WorkflowRun = workflowRun(deps.db, instanceId, { now: deps.now, leaseSeconds: 60 });
  const input = await loadVerificationInput(deps.db, candidateId);
  const reserved = await run.done<{ ok: boolean; reservation?: SandboxReservation }>("reserve");
  if (reserved?.output.ok && reserved.output.reservation && !(await run.done("settle"))) {
    await settleSandbox(
      deps.db,
      reserved.output.reservation,
      { wallSeconds: 0, billing: deps.sandbox.billing },
      deps.config,
    );
  }
  if (input) {
    const rerun = instanceId !== candidateId;
    await run.txStep("finish", async (ctx) => {
      const moved = await finishCandidateVerification(
        ctx,
        { candidateId, changeId: input.candidate.changeId, ...(rerun ? { eventKey: instanceId } : {}) },
        { status: "rejected", reason: `verification could not finish: ${why}`, gaps: [] },
        deps,
      );
      if (rerun) await finishCheckRerun(ctx, instanceId, "rejected", deps.now());
      return moved;
    });
  }
  await finishWorkflowInstance(deps.db, instanceId, { status: "failed", error: why }, deps.now());
  return { candidateId, outcome: "rejected", detail: why };
}
