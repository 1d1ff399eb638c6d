import type { Environment, QueuePurpose, RhumbatronConfig } from "../config.ts";
import type { CommandType } from "../events/command.ts";

/** `rhumbatron-<purpose>-<env>` (spec: Queues). */
export function queueName(purpose: QueuePurpose, env: Environment): string {
  return `rhumbatron-${purpose}-${env}`;
}

/**
 * Which queue carries each command type (spec: the Queues flowchart). verification.start runs on
 * the verification queue and release.start on the release queue; both are consumed by integration.
 */
export const QUEUE_FOR_COMMAND: Record<CommandType, Exclude<QueuePurpose, "dead-letter">> = {
  "agent.wake": "agent-wakeups",
  "change.dispatch": "integration",
  "candidate.create": "integration",
  // One queue consumed one message at a time: promotions land one at a time, in the order they became ready.
  "candidate.land": "integration",
  "forks.sweep": "integration",
  "project.provision": "integration",
  "project.cleanup": "integration",
  "fixture.publish": "integration",
  "index.build": "indexing",
  "index.purge": "indexing",
  "verification.start": "verification",
  "release.start": "release",
};

/** Stable command IDs: a re-send of the same request is the same command (spec: Idempotency). */
export const commandIds = {
  /** The first attempt keeps its original ID; a retry (attempt 2, 3, …) is a new command. */
  wake: (taskId: string, attempt = 1) => (attempt > 1 ? `cmd_${taskId}_ready_a${attempt}` : `cmd_${taskId}_ready`),
  verify: (candidateId: string) => `cmd_${candidateId}_verify`,
  /** One landing attempt per Candidate and cause (it became ready, or landing was switched on). */
  land: (candidateId: string, cause: string) => `cmd_land_${candidateId}_${cause}`,
  release: (releaseId: string) => `cmd_${releaseId}_release`,
};

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

/**
 * The queue policy for one delivery (pure). `deliveries` counts this one. A failure is retried
 * `maxRetries` times, `retryDelaySeconds` apart; then the queue's exhaustion rule applies. An
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
          availableAt: new Date(now.getTime() + policy.retryDelaySeconds * 1000),
          error: outcome.error,
        };
      }
      return exhausted(outcome.error);
  }
}

/** The per-Change daily command cap (spec: 1,000 commands per Change per day). */
export function commandCapWindow(now: Date): string {
  return now.toISOString().slice(0, 10);
}
