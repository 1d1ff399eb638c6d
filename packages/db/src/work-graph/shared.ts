import type { Actor } from "@rhumbatron/core";
import type { EnqueueDeps } from "@rhumbatron/runtime";
import type { TxContext } from "../transaction.ts";

/** What work-graph commands need: the typed config, the nudger and the clock. */
export type WorkGraphDeps = EnqueueDeps;

export { changeEvent } from "../events/factory.ts";

export const agentIdForTask = (taskId: string) => `agt_${taskId}`;

export const SYSTEM: Actor = { kind: "system", id: "rhumbatron" };

/** The Agent runner's nudge channel: a queued run wakes it on commit. */
export const AGENT_RUNS_CHANNEL = "agent_runs";

/**
 * Wakes every one of a worker's config.worker.agentRunsAtOnce Agent-run lanes (each executes one
 * run at a time): a free one claims the new run, a busy one finds it claimed or takes the next.
 */
export async function nudgeAgentRunners(ctx: TxContext, deps: WorkGraphDeps): Promise<void> {
  for (let i = 0; i < deps.config.worker.agentRunsAtOnce; i++)
    await deps.nudger.nudge(ctx, AGENT_RUNS_CHANNEL, `lane${i}`);
}
