import { z } from "zod";
import { TEST_EVENTS } from "./flaky-events.ts";

/**
 * Every Event type the system writes, its current version, its payload schema, and which owner
 * writes it: `project-root` facts lock the project row and take a random ID; `resource-shard` facts
 * lock the resource they concern (for example the change) and take a stable ID (docs/protocol.md,
 * The transactional outbox). A payload change that breaks readers bumps the version.
 */
const id = z.string().min(1);
const paths = z.array(z.string().min(1));
const riskTier = z.enum(["low", "medium", "high", "critical"]);
/** A Task's hold on what its intents name, from the moment its Agent holds the Task until its run ends. */
const claimPayload = z.object({
  agentId: id,
  paths,
  prefixes: paths.optional(),
  attempt: z.number().int().positive().optional(),
});

export const EVENT_CATALOGUE = {
  "project.created": { version: 1, owner: "project-root", payload: z.object({ name: z.string().min(1) }) },
  "project.archived": { version: 1, owner: "project-root", payload: z.object({}) },
  /** A project's verification policy got a new version (docs/verification.md, The project's policy); `changed`: its top-level fields. */
  "policy.updated": {
    version: 1,
    owner: "project-root",
    payload: z.object({
      policyId: id,
      version: z.number().int().min(2),
      previousVersion: z.number().int().positive(),
      changed: z.array(z.string().min(1)),
    }),
  },
  /** An admin paused, drained or resumed the project's landing queue (docs/landing.md, Queue controls). */
  "landing.queue_changed": {
    version: 1,
    owner: "project-root",
    payload: z.object({
      state: z.enum(["running", "paused", "draining"]),
      previous: z.enum(["running", "paused", "draining"]),
      actorId: id,
    }),
  },
  /** An admin gave a Change priority in its project's landing queue, or moved it to the front (docs/landing.md). */
  "landing.priority_changed": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({
      priority: z.number().int(),
      previous: z.number().int(),
      front: z.boolean(),
      actorId: id,
    }),
  },
  "artifact.promoted": {
    version: 1,
    owner: "project-root",
    payload: z.object({
      candidateId: id,
      generation: z.number().int().nonnegative(),
      treeHash: z.string(),
      commit: z.string(),
    }),
  },
  "canonical.advanced": {
    version: 1,
    owner: "project-root",
    payload: z.object({
      candidateId: id,
      fromGeneration: z.number().int().nonnegative(),
      toGeneration: z.number().int().positive(),
      treeHash: z.string(),
    }),
  },
  "change.created": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({
      title: z.string().min(1),
      riskTier,
      clientRequestId: z.string().min(1),
      taskIds: z.array(id),
    }),
  },
  "change.dispatched": { version: 1, owner: "resource-shard", payload: z.object({ readyTaskIds: z.array(id) }) },
  "task.ready": { version: 1, owner: "resource-shard", payload: z.object({ key: z.string() }) },
  "task.started": { version: 1, owner: "resource-shard", payload: z.object({ agentId: id, runId: id }) },
  "task.completed": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ runId: id, changeSetId: id.nullable() }),
  },
  "task.failed": { version: 1, owner: "resource-shard", payload: z.object({ reason: z.string() }) },
  "task.blocked": {
    version: 1,
    owner: "resource-shard",
    /** `cause`: the guard that refused, finer than `limit` (`sandbox_monthly_seconds` for the budget). */
    payload: z.object({ limit: z.string().min(1), cause: z.string().min(1).optional(), reason: z.string() }),
  },
  "task.retried": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ key: z.string().min(1), attempt: z.number().int().min(2), previousState: z.string() }),
  },
  /**
   * Intents, claims and challenges (docs/agents.md, Intents, claims and challenges). `attempt` is the Task's
   * attempt, so a wake caused by one Task's hold on its paths is one wake per attempt whichever of its
   * Events routes first.
   */
  "intent.declared": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ agentId: id, paths, prefixes: paths, attempt: z.number().int().positive().optional() }),
  },
  "challenge.raised": {
    version: 1,
    owner: "resource-shard",
    /** `agentId` raised it (the later claim); `heldBy` holds the earlier claim on `paths`. */
    payload: z.object({
      agentId: id,
      paths,
      reason: z.string(),
      attempt: z.number().int().positive().optional(),
      heldBy: z.object({ taskId: id, agentId: id }).optional(),
    }),
  },
  "changeset.published": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ changeSetId: id, agentId: id, paths, patchRef: z.string().nullable() }),
  },
  "claim.acquired": { version: 1, owner: "resource-shard", payload: claimPayload },
  "claim.released": { version: 1, owner: "resource-shard", payload: claimPayload },
  "agent.woken": {
    version: 1,
    owner: "resource-shard",
    /** `stale`: the Agent's own re-check found the wake no longer relevant; `note` says what it did. */
    payload: z.object({
      agentId: id,
      reason: z.string(),
      stale: z.boolean(),
      runId: id.optional(),
      causeEventId: id.optional(),
      paths: paths.optional(),
      note: z.string().optional(),
    }),
  },
  "model.routed": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({
      purpose: z.string(),
      model: z.string(),
      agentId: id.optional(),
      decision: z.enum(["wake", "skip"]).optional(),
      probability: z.number().min(0).max(1).optional(),
    }),
  },
  "verification.started": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ reason: z.enum(["work_graph_completed", "manual", "retry"]), candidateId: id.nullable() }),
  },
  /** One attempt of a Task with several ended (docs/attempts.md): its ChangeSet, or why it has none. */
  "attempt.finished": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({
      attempt: z.number().int().min(2),
      runId: id,
      agentId: id,
      outcome: z.enum(["completed", "failed"]),
      changeSetId: id.nullable(),
      reason: z.string().optional(),
    }),
  },
  /** The attempt that goes on was picked, by a person or by the Task's rule; the others' Candidates are cancelled. */
  "attempt.picked": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({
      attempt: z.number().int().positive(),
      rule: z.enum(["person", "first_verified", "fewest_lines"]),
      candidateId: id.nullable(),
      actorId: id.optional(),
      cancelledCandidateIds: z.array(id),
    }),
  },
  "candidate.created": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({
      candidateId: id,
      baseGeneration: z.number().int().nonnegative(),
      compositionKey: z.string(),
      /** Set when canonical advanced under an earlier Candidate of the Change and this one replaces it. */
      recomposedFrom: id.optional(),
      /** Why, in words for the Change page and `change watch` ("recomposed on generation 7 after chg_… was promoted"). */
      reason: z.string().optional(),
      /** The Candidate below it in a speculative stack, whose composed commit is its base (docs/landing.md). */
      stackedOn: id.optional(),
    }),
  },
  "candidate.composed": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ candidateId: id, treeHash: z.string() }),
  },
  "candidate.verified": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ candidateId: id, humanGate: z.boolean() }),
  },
  "candidate.rejected": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ candidateId: id, reason: z.string(), gaps: z.array(z.string()) }),
  },
  "candidate.stale": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ candidateId: id, canonicalGeneration: z.number().int() }),
  },
  "change.cancelled": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ reason: z.string(), candidateIds: z.array(id), actorId: id }),
  },
  "change.landing_changed": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ landWhenReady: z.boolean(), actorId: id }),
  },
  "candidate.recomposition_held": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ staleCandidateId: id, generation: z.number().int(), reason: z.string() }),
  },
  "evidence.recorded": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({
      candidateId: id,
      checkId: z.string(),
      status: z.enum(["pass", "fail", "error", "skipped"]),
      coverage: z.enum(["not_checked", "checked_no_signal", "checked_supported"]),
    }),
  },
  ...TEST_EVENTS,
  /**
   * A Candidate's conflict review, recorded once with its findings (docs/verification.md, Conflict reviews):
   * `skipped` when no model is configured, `failed` when its answer could not be used.
   */
  "conflict_review.recorded": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({
      candidateId: id,
      reviewId: id,
      status: z.enum(["completed", "failed", "skipped"]),
      reason: z.string().optional(),
      findings: z.array(
        z.object({ findingId: id, severity: z.enum(["blocking", "advisory"]), supported: z.boolean() }),
      ),
    }),
  },
  "check.rerun_requested": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ candidateId: id, checkId: z.string().min(1), rerun: z.number().int().positive(), actorId: id }),
  },
  "approval.requested": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ candidateId: id, treeHash: z.string() }),
  },
  "approval.granted": {
    version: 1,
    owner: "resource-shard",
    /** carriedFrom: the Candidate whose approval of the same tree was carried over (no person acted again). */
    payload: z.object({ candidateId: id, treeHash: z.string(), approverId: id, carriedFrom: id.optional() }),
  },
  "approval.rejected": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ candidateId: id, treeHash: z.string(), approverId: id, note: z.string().min(1) }),
  },
  "promotion.blocked": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ candidateId: id, blocks: z.array(z.string()) }),
  },
  "release.started": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ releaseId: id, generation: z.number().int() }),
  },
  "release.completed": {
    version: 1,
    owner: "resource-shard",
    payload: z.object({ releaseId: id, outcome: z.enum(["succeeded", "failed"]) }),
  },
  /**
   * A command ran out of retries and is waiting for an operator (Operations: Retry or Dismiss); written
   * when the dead letter opens, and again when it opens anew after a Retry failed (`attempts`).
   */
  "dead_letter.recorded": {
    version: 1,
    owner: "project-root",
    payload: z.object({
      deadLetterId: id,
      commandId: id,
      commandType: z.string().min(1),
      originQueue: z.string().nullable(),
      reason: z.string(),
      attempts: z.number().int().positive(),
    }),
  },
} as const satisfies Record<string, { version: number; owner: "project-root" | "resource-shard"; payload: z.ZodType }>;

export type EventType = keyof typeof EVENT_CATALOGUE;
export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as EventType[];
export type EventPayload<T extends EventType> = z.infer<(typeof EVENT_CATALOGUE)[T]["payload"]>;

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(EVENT_CATALOGUE, value);
}

/**
 * Lifecycle Events -> metric names of the analytics dataset (one point per Event).
 * A function of the event so a woken agent that found its wake stale counts as a false wakeup.
 */
export const METRIC_FOR_EVENT: Partial<Record<EventType, (payload: Record<string, unknown>) => string>> = {
  "change.created": () => "change_created",
  "task.ready": () => "task_ready",
  "task.started": () => "task_started",
  "task.completed": () => "task_completed",
  "task.failed": () => "task_failed",
  "task.blocked": () => "task_blocked",
  "agent.woken": (p) => (p.stale === true ? "agent_false_wakeup" : "agent_wakeup"),
  "model.routed": () => "model_route",
  "candidate.created": () => "candidate_created",
  "candidate.composed": () => "candidate_composed",
  "candidate.verified": () => "candidate_verified",
  "candidate.rejected": () => "candidate_rejected",
  "candidate.stale": () => "candidate_stale",
  "check.rerun_requested": () => "check_rerun",
  "approval.granted": () => "approval_granted",
  "approval.rejected": () => "approval_rejected",
  "promotion.blocked": () => "promotion_blocked",
  "canonical.advanced": () => "promotion_completed",
  "release.completed": () => "release_completed",
};

/**
 * Event types the causal router reads. Every other catalogued type is informational: the router
 * takes no action on it (task.ready is ignored on purpose: the dispatcher already sent the wake).
 */
export const ROUTED_EVENT_TYPES = [
  "task.completed",
  "task.failed",
  "verification.started",
  "canonical.advanced",
  "candidate.stale",
  "candidate.composed",
  "candidate.rejected",
  "change.cancelled",
  "change.landing_changed",
  "candidate.verified",
  "approval.granted",
  "attempt.picked",
  "artifact.promoted",
  "intent.declared",
  "challenge.raised",
  "changeset.published",
  "claim.acquired",
  "claim.released",
] as const satisfies readonly EventType[];

export const INFORMATIONAL_EVENT_TYPES: EventType[] = EVENT_TYPES.filter(
  (t) => t !== "task.ready" && !(ROUTED_EVENT_TYPES as readonly string[]).includes(t),
);
