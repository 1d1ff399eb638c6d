import { AGENT_RUNS_CHANNEL, claimNextRun } from "@rhumbatron/db";
import { doneWorking } from "@rhumbatron/runtime";
import { executeRun, type RunnerDeps } from "../agents/runner.ts";
import type { WorkerFunction } from "./types.ts";

/**
 * Executes queued Agent runs until none is left or the per-run budget is spent; one at a time per
 * lane, and a worker has config.worker.agentRunsAtOnce lanes (each new run wakes them all:
 * db's nudgeAgentRunners), so several Agents of a landing queue work side by side. A run whose runner died (its
 * heartbeat stopped for worker.takeoverSeconds) or stopped answering for longer than its
 * reservation is picked up again and restored from its fork. A run this worker claimed whose
 * execution failed before it could let go (the database went away under it) is taken again by the
 * next tick here once worker.takeoverSeconds have passed, not left until its lease runs out
 * (leases/working.ts).
 */
export function agentRunnerFunction(deps: Omit<RunnerDeps, "now">): WorkerFunction {
  return {
    id: "agent-runner",
    triggers: { cron: deps.config.queues.pollCron, nudge: AGENT_RUNS_CHANNEL },
    retries: 0,
    async handler({ now, logger, worker }) {
      const staleAfterMs =
        (deps.config.sandbox.agentReservationSeconds + deps.config.sandbox.agentIdleTailSeconds) * 1000;
      const results = [];
      for (let i = 0; i < 10; i++) {
        const runId = await claimNextRun(deps.db, {
          now: now(),
          runner: worker.workerId,
          staleAfterMs,
          takeoverSeconds: deps.config.worker.takeoverSeconds,
        });
        if (!runId) break;
        let r: Awaited<ReturnType<typeof executeRun>>;
        try {
          r = await executeRun({ ...deps, now }, runId);
        } finally {
          doneWorking(worker.workerId, "agent_run", [runId], now());
        }
        logger.info({ runId, outcome: r.outcome, detail: r.detail }, "agent run finished");
        results.push({ runId, outcome: r.outcome });
      }
      return { runs: results };
    },
  };
}
