import { type Actor, buildEvent, type EventPayload, type EventType, stableEventId } from "@rhumbatron/core";
import type { LockedChange } from "../events/outbox.ts";
import type { EnqueueDeps } from "../queues/enqueue.ts";

/** What work-graph commands need: the typed config, the nudger and the clock. */
export type WorkGraphDeps = EnqueueDeps;

export const agentIdForTask = (taskId: string) => `agt_${taskId}`;

/** A Change Event with its stable ID (retries write the same Event, which the outbox ignores). */
export function changeEvent<T extends EventType>(
  owner: LockedChange,
  eventType: T,
  o: {
    taskId?: string | null;
    key?: string | null;
    /** The Task's attempt: a retried Task's Events get IDs of their own (the first keeps the old ones). */
    attempt?: number;
    actor: Actor;
    causedBy?: string | null;
    payload: EventPayload<T>;
    now: Date;
  },
) {
  return buildEvent({
    eventId: stableEventId(owner.id, eventType, o.taskId ?? null, attemptKey(o.key ?? null, o.attempt)),
    eventType,
    tenantId: owner.tenantId,
    projectId: owner.projectId,
    changeId: owner.id,
    taskId: o.taskId ?? null,
    actor: o.actor,
    resource: `change:${owner.id}`,
    canonicalGeneration: owner.canonicalGeneration,
    causedBy: o.causedBy ?? null,
    correlationId: owner.id,
    timestamp: o.now,
    payload: o.payload,
  });
}

function attemptKey(key: string | null, attempt: number | undefined): string | null {
  if (!attempt || attempt <= 1) return key;
  return key ? `${key}#a${attempt}` : `a${attempt}`;
}

export const SYSTEM: Actor = { kind: "system", id: "rhumbatron" };

/** The Agent runner's nudge channel: a queued run wakes it on commit. */
export const AGENT_RUNS_CHANNEL = "agent_runs";
