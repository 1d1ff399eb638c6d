import type { OverlapClassifier } from "@rhumbatron/core";

/**
 * The default when no model is configured: abstain without a call, which wakes the agent
 * (spec: Causal routing, "An abstention wakes the Agent, which is the safe default").
 */
export const abstainClassifier: OverlapClassifier = {
  name: "abstain",
  async classify() {
    return { decision: "abstain", probability: 0, model: "none", reason: "no classifier configured" };
  },
};
