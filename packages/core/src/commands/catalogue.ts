import { z } from "zod";
import type { QueuePurpose } from "../config.ts";
import { DomainError } from "../errors.ts";
import { COMMAND_TYPES, type CommandType } from "../events/command.ts";
import { fixtureFile } from "../work-graph/fixture.ts";

/**
 * Every command type, in one place: the queue that carries it, its payload schema, and (below) the
 * function that makes its stable ID. Commands are made by `newCommand`, which checks the payload
 * against this catalogue; the queue's `buildCommand` checks every envelope again before it is sent.
 * Payloads may carry more fields than a schema names (a cause, a reason): the schema states what
 * the handler needs.
 */
const id = z.string().min(1);
const cause = { causeEventId: id.optional() };

export const COMMAND_CATALOGUE = {
  "agent.wake": {
    queue: "agent-wakeups",
    payload: z.looseObject({
      agentId: id,
      reason: z.string().min(1),
      ...cause,
      causeType: z.string().optional(),
      eventPaths: z.array(z.string()).optional(),
      /** The Task whose Event caused the wake, and the paths on both sides that overlap. */
      causeTaskId: id.optional(),
      overlapping: z.array(z.string()).optional(),
    }),
  },
  "change.dispatch": { queue: "integration", payload: z.looseObject({ reason: z.string().optional(), ...cause }) },
  "candidate.create": {
    queue: "integration",
    payload: z.looseObject({
      ...cause,
      recomposeFrom: id.optional(),
      generation: z.number().int().nonnegative().optional(),
      held: z.boolean().optional(),
    }),
  },
  // One queue consumed one message at a time: promotions land one at a time, in the order they became ready.
  "candidate.land": { queue: "integration", payload: z.looseObject({ candidateId: id, ...cause }) },
  "forks.sweep": { queue: "integration", payload: z.looseObject({}) },
  "project.provision": { queue: "integration", payload: z.looseObject({}) },
  "project.cleanup": { queue: "integration", payload: z.looseObject({}) },
  /** A person's ChangeSet for a Task (work-graph/fixture.ts): what to write, who sent it, for which attempt. */
  "fixture.publish": {
    queue: "integration",
    payload: z.looseObject({
      summary: z.string().min(1),
      files: z.array(fixtureFile).min(1),
      contentHash: z.string().regex(/^[0-9a-f]{64}$/),
      actorId: id,
      attempt: z.number().int().positive(),
    }),
  },
  "index.build": { queue: "indexing", payload: z.looseObject({ generation: z.number().int().nonnegative() }) },
  "index.purge": { queue: "indexing", payload: z.looseObject({}) },
  "verification.start": { queue: "verification", payload: z.looseObject({ candidateId: id }) },
  "release.start": { queue: "release", payload: z.looseObject({ releaseId: id }) },
  /** One delivery of one Event to one project webhook (docs/notifications.md). */
  "webhook.deliver": {
    queue: "webhooks",
    payload: z.looseObject({ webhookId: id, deliveryId: id, eventId: id }),
  },
} as const satisfies Record<CommandType, { queue: Exclude<QueuePurpose, "dead-letter">; payload: z.ZodType }>;

export type CommandPayload<T extends CommandType> = z.infer<(typeof COMMAND_CATALOGUE)[T]["payload"]>;

/** Which queue carries each command type, from COMMAND_CATALOGUE above (docs/protocol.md, Commands and queues). */
export const QUEUE_FOR_COMMAND = Object.fromEntries(COMMAND_TYPES.map((t) => [t, COMMAND_CATALOGUE[t].queue])) as {
  [T in CommandType]: (typeof COMMAND_CATALOGUE)[T]["queue"];
};

/**
 * Stable command IDs, one function each (docs/protocol.md, Commands and queues): a re-send of the same request is the
 * same command, so a queue holds it at most once. Nothing else formats a command ID.
 */
export const commandIds = {
  /** A Task's wake; the first attempt keeps its original ID, a retry (attempt 2, 3, …) is a new command. */
  wake: (taskId: string, attempt = 1) => (attempt > 1 ? `cmd_${taskId}_ready_a${attempt}` : `cmd_${taskId}_ready`),
  /** The router's wake of a running Agent because of one Event (an overlap, a new generation). */
  wakeOnEvent: (agentId: string, eventId: string) => `cmd_wake_${agentId}_${eventId}`,
  /**
   * The router's wake of a running Agent (in its attempt) because another Task (in its attempt) holds
   * or means to hold the same paths: one wake per pair, whichever of the intent, the claim or the
   * challenge routes first, so one cause never wakes an Agent twice.
   */
  wakeOnHold: (agentId: string, attempt: number, causeTaskId: string, causeAttempt: number) =>
    `cmd_wake_${agentId}_a${attempt}_hold_${causeTaskId}_a${causeAttempt}`,
  /** Dispatch of a new Change, of a Change after an Event, and after a Task retry. */
  dispatchCreated: (changeId: string) => `cmd_dispatch_${changeId}_created`,
  dispatchAfter: (eventId: string) => `cmd_dispatch_${eventId}`,
  dispatchRetry: (taskId: string, attempt: number) => `cmd_retry_${taskId}_a${attempt}`,
  /** The Candidate of a Change whose Tasks all completed (one per causing Event). */
  compose: (eventId: string) => `cmd_${eventId}_candidate`,
  /** The automatic recomposition of a Change on one generation, and its re-send once a hold ends. */
  /** One recomposition per Candidate that went stale (a stack's failure can stale two on one generation). */
  recompose: (changeId: string, generation: number, staleCandidateId: string) =>
    `cmd_recompose_${changeId}_S${generation}_${staleCandidateId}`,
  /** A Change that waited for its place in the speculative stack, asked again after `causeEventId`. */
  stackPlace: (changeId: string, causeEventId: string) => `cmd_stack_${changeId}_${causeEventId}`,
  recomposeHeld: (changeId: string, generation: number, retryAtMs: number) =>
    `cmd_recompose_${changeId}_S${generation}_at${retryAtMs}`,
  /** The Candidate of one attempt's ChangeSet (docs/attempts.md), and a picked attempt's recomposition. */
  attemptCandidate: (changeSetId: string) => `cmd_attempt_${changeSetId}_candidate`,
  pickRecompose: (candidateId: string) => `cmd_pick_${candidateId}_recompose`,
  verify: (candidateId: string) => `cmd_${candidateId}_verify`,
  /** One landing attempt per Candidate and cause (it became ready, or landing was switched on). */
  land: (candidateId: string, cause: string) => `cmd_land_${candidateId}_${cause}`,
  release: (releaseId: string) => `cmd_${releaseId}_release`,
  indexBuild: (projectId: string, generation: number) => `cmd_index_${projectId}_S${generation}`,
  indexPurge: (projectId: string) => `cmd_index_purge_${projectId}`,
  provision: (projectId: string) => `cmd_provision_${projectId}`,
  cleanup: (projectId: string) => `cmd_cleanup_${projectId}`,
  /** One sweep of a project's forks per day (YYYY-MM-DD). */
  forksSweep: (projectId: string, day: string) => `cmd_forks_sweep_${projectId}_${day}`,
  /**
   * One webhook delivery (webhookDeliveryId): a retry of the delivery is the same command, so it is
   * on the queue once and sends under the same delivery ID; a Redeliver is a new delivery.
   */
  webhookDeliver: (deliveryId: string) => `cmd_webhook_${deliveryId}`,
  /** A person's fixture for a Task's attempt: the same files and summary again are the same command. */
  fixturePublish: (taskId: string, attempt: number, contentHash: string) =>
    `cmd_fixture_${taskId}_a${attempt}_${contentHash.slice(0, 32)}`,
};

export interface TypedCommand<T extends CommandType = CommandType> {
  commandType: T;
  commandId: string;
  projectId: string;
  changeId: string | null;
  taskId: string | null;
  payload: CommandPayload<T> & Record<string, unknown>;
}

/** Whether `payload` is what the catalogue says a `type` command carries; the first problem, or null. */
export function commandPayloadProblem(type: CommandType, payload: unknown): string | null {
  const parsed = COMMAND_CATALOGUE[type].payload.safeParse(payload);
  if (parsed.success) return null;
  const issue = parsed.error.issues[0];
  return `${issue?.path.join(".") || "payload"}: ${issue?.message ?? "invalid"}`;
}

/** A command, its payload checked against the catalogue (a bad one is a programming error: INVALID_INPUT). */
export function newCommand<T extends CommandType>(
  commandType: T,
  c: {
    commandId: string;
    projectId: string;
    changeId?: string | null;
    taskId?: string | null;
    payload: CommandPayload<T> & Record<string, unknown>;
  },
): TypedCommand<T> {
  const problem = commandPayloadProblem(commandType, c.payload);
  if (problem) throw new DomainError("INVALID_INPUT", `${commandType} ${c.commandId}: ${problem}`);
  return {
    commandType,
    commandId: c.commandId,
    projectId: c.projectId,
    changeId: c.changeId ?? null,
    taskId: c.taskId ?? null,
    payload: c.payload,
  };
}
