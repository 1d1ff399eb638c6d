import { randomUUID } from "node:crypto";
import {
  type Actor,
  buildEvent,
  type EventPayload,
  type EventType,
  randomEventId,
  stableEventId,
} from "@rhumbatron/core";
import type { LockedChange, LockedProject } from "./owners.ts";

/**
 * The one factory of a Change's Events (resource shard `change:<id>`): the envelope's fields come
 * from the locked Change, the ID is stable (the Change, the type, the Task and a key), so a retried
 * write produces the same Event and the outbox ignores it. The payload is checked by buildEvent
 * against the catalogue.
 */
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
    /** The generation the Event speaks of, when it is newer than the one read with the lock (a stale Candidate). */
    canonicalGeneration?: number;
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
    canonicalGeneration: o.canonicalGeneration ?? owner.canonicalGeneration,
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

/**
 * A project-wide fact (owner `project-root`: project created or archived, canonical advanced, an
 * artifact promoted): written once by the transaction that holds the project row, with a random ID.
 * A fact about one Change's promotion carries that Change as its correlation.
 */
export function projectEvent<T extends EventType>(
  root: LockedProject,
  eventType: T,
  o: {
    changeId?: string | null;
    actor: Actor;
    causedBy?: string | null;
    canonicalGeneration?: number;
    payload: EventPayload<T>;
    now: Date;
  },
) {
  return buildEvent({
    eventId: randomEventId(randomUUID()),
    eventType,
    tenantId: root.tenantId,
    projectId: root.id,
    changeId: o.changeId ?? null,
    actor: o.actor,
    resource: `project:${root.id}`,
    canonicalGeneration: o.canonicalGeneration ?? root.canonicalGeneration,
    causedBy: o.causedBy ?? null,
    correlationId: o.changeId ?? root.id,
    timestamp: o.now,
    payload: o.payload,
  });
}
