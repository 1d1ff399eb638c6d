import type { Environment, QueuePurpose, RhumbatronConfig } from "../config.ts";

/** `rhumbatron-<purpose>-<env>` (docs/protocol.md, Commands and queues). */
export function queueName(purpose: QueuePurpose, env: Environment): string {
  return `rhumbatron-${purpose}-${env}`;
}

export const releaseId = (projectId: string, generation: number) => `rel_${projectId}_${generation}`;

/** What a handler reports for one delivery. */
export type HandlerResult = "done" | "more";

export type DeliveryOutcome =
  | { kind: "handled"; result: HandlerResult }
  | { kind: "failed"; error: string }
  | { kind: "unknown_type"; commandType: string };

export type DeliveryAction =
  | { action: "ack" }
  /** Bounded work: deliver again at once (the integration consumer's own limit). */
  | { action: "redeliver" }
  /** The last allowed delivery still had work: ack, and leave the rest to the maintenance tick. */
  | { action: "ack_and_defer" }
  | { action: "retry"; availableAt: Date; error: string }
  | { action: "dead_letter"; error: string }
  | { action: "record_failure"; error: string }
  | { action: "drop"; error: string };

/** How long the retry after the `deliveries`-th failed delivery waits (the queue's backoff). */
export function retryDelaySeconds(
  policy: Pick<RhumbatronConfig["queues"]["policies"][QueuePurpose], "retryDelaySeconds" | "retryBackoff">,
  deliveries: number,
): number {
  if (policy.retryBackoff !== "exponential") return policy.retryDelaySeconds;
  return policy.retryDelaySeconds * 2 ** Math.max(0, deliveries - 1);
}

/**
 * The queue policy for one delivery (pure). `deliveries` counts this one. A failure is retried
 * `maxRetries` times, `retryDelaySeconds` apart (doubling each time with exponential backoff); then
 * the queue's exhaustion rule applies. An
 * unknown command type skips the retries.
 */
export function decideDelivery(
  outcome: DeliveryOutcome,
  deliveries: number,
  purpose: QueuePurpose,
  config: RhumbatronConfig,
  now: Date,
): DeliveryAction {
  const policy = config.queues.policies[purpose];
  const exhausted = (error: string): DeliveryAction => {
    switch (policy.onExhaustion) {
      case "dead-letter":
        return { action: "dead_letter", error };
      case "record-index-failure":
        return { action: "record_failure", error };
      case "drop-and-log":
        return { action: "drop", error };
    }
  };
  switch (outcome.kind) {
    case "handled":
      if (outcome.result === "done") return { action: "ack" };
      return deliveries >= config.integration.maxDeliveriesPerCommand
        ? { action: "ack_and_defer" }
        : { action: "redeliver" };
    case "unknown_type":
      return exhausted(`unknown command type ${outcome.commandType} on ${purpose}`);
    case "failed":
      if (deliveries <= policy.maxRetries) {
        return {
          action: "retry",
          availableAt: new Date(now.getTime() + retryDelaySeconds(policy, deliveries) * 1000),
          error: outcome.error,
        };
      }
      return exhausted(outcome.error);
  }
}

/** The per-Change daily command cap's window, one UTC day (`causal.commandsPerChangePerDay`; docs/protocol.md, Tasks and Agent runs). */
export function commandCapWindow(now: Date): string {
  return now.toISOString().slice(0, 10);
}
