import type { OverlapClassifier } from "@rhumbatron/core";

/**
 * The default when no model is configured: abstain without a call, which wakes the agent (docs/agents.md,
 * The overlap classifier). Waking is the safe default: a needless wake costs a run, a missed one
 * can leave an Agent working on what another Change has already moved.
 */
export const abstainClassifier: OverlapClassifier = {
  name: "abstain",
  async classify() {
    return { decision: "abstain", probability: 0, model: "none", reason: "no classifier configured" };
  },
};
