import type { Actor } from "@rhumbatron/core";
import type { EnqueueDeps } from "@rhumbatron/runtime";

/** What work-graph commands need: the typed config, the nudger and the clock. */
export type WorkGraphDeps = EnqueueDeps;

export { changeEvent } from "../events/factory.ts";

export const agentIdForTask = (taskId: string) => `agt_${taskId}`;

export const SYSTEM: Actor = { kind: "system", id: "rhumbatron" };

/** The Agent runner's nudge channel: a queued run wakes it on commit. */
export const AGENT_RUNS_CHANNEL = "agent_runs";
