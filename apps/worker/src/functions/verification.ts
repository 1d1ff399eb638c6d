import { workflowChannel } from "@rhumbatron/db";
import { drainVerifications } from "../verification/runner.ts";
import type { VerificationDeps } from "../verification/verification-run.ts";
import type { WorkerFunction } from "./types.ts";

/**
 * Runs CandidateVerificationWorkflow instances (one per Candidate), woken when an instance starts
 * and polled so a crashed runner's instance is picked up once its heartbeat stops.
 */
export function verificationWorkflowFunction(deps: Omit<VerificationDeps, "now">): WorkerFunction {
  return {
    id: "verification-workflow",
    triggers: { cron: deps.config.queues.pollCron, nudge: workflowChannel("verification") },
    retries: 0,
    async handler({ now, logger, worker }) {
      const results = await drainVerifications({ ...deps, now }, worker.workerId);
      for (const r of results) logger.info(r, "candidate verification finished");
      return { verifications: results };
    },
  };
}
