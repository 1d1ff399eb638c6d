import { z } from "zod";
import { EVENT_CATALOGUE, type EventPayload, type EventType, isEventType } from "./catalogue.ts";

/** The Event envelope (docs/protocol.md, The Event envelope). Payload typing comes from the catalogue. */
export const actorSchema = z.object({
  kind: z.enum(["user", "agent", "system", "operator"]),
  id: z.string().min(1),
});
export type Actor = z.infer<typeof actorSchema>;

export const eventEnvelopeSchema = z.object({
  eventId: z.string().regex(/^evt_[0-9a-f]{32}$/),
  eventType: z.string().min(1),
  eventVersion: z.number().int().positive(),
  tenantId: z.string().min(1),
  projectId: z.string().min(1),
  changeId: z.string().min(1).nullable(),
  taskId: z.string().min(1).nullable(),
  actor: actorSchema,
  /** The resource whose owner wrote the Event: `project:<id>` or e.g. `change:<id>`. */
  resource: z.string().regex(/^[a-z_]+:.+$/),
  canonicalGeneration: z.number().int().nonnegative(),
  /** The Event or Command that caused this one, if any. */
  causedBy: z.string().min(1).nullable(),
  correlationId: z.string().min(1),
  timestamp: z.iso.datetime(),
  payload: z.unknown(),
});
export type RawEventEnvelope = z.infer<typeof eventEnvelopeSchema>;

export type EventEnvelope<T extends EventType = EventType> = Omit<RawEventEnvelope, "eventType" | "payload"> & {
  eventType: T;
  payload: EventPayload<T>;
};

/**
 * One decoded Event of any type, as a union over the catalogue: switching on `eventType` narrows
 * `payload` to that type's schema, so consumers read typed payloads without casts.
 */
export type AnyEventEnvelope = { [T in EventType]: EventEnvelope<T> }[EventType];

export type DecodeErrorCode = "malformed_envelope" | "unknown_type" | "wrong_version" | "bad_payload";
export interface DecodeError {
  code: DecodeErrorCode;
  message: string;
  eventId: string | null;
}
export type DecodeResult = { ok: true; event: AnyEventEnvelope } | { ok: false; error: DecodeError };

/**
 * Decodes one envelope. Never throws: an unknown type, a wrong version or a bad payload comes back
 * as a typed error so one bad Event cannot kill the batch it arrived in.
 */
export function decodeEvent(raw: unknown): DecodeResult {
  const env = eventEnvelopeSchema.safeParse(raw);
  const rawId =
    typeof raw === "object" && raw !== null && "eventId" in raw ? String((raw as { eventId: unknown }).eventId) : null;
  if (!env.success) {
    return { ok: false, error: { code: "malformed_envelope", message: z.prettifyError(env.error), eventId: rawId } };
  }
  const e = env.data;
  if (!isEventType(e.eventType)) {
    return {
      ok: false,
      error: { code: "unknown_type", message: `unknown event type ${e.eventType}`, eventId: e.eventId },
    };
  }
  const entry = EVENT_CATALOGUE[e.eventType];
  if (e.eventVersion !== entry.version) {
    return {
      ok: false,
      error: {
        code: "wrong_version",
        message: `${e.eventType} version ${e.eventVersion} is not the supported version ${entry.version}`,
        eventId: e.eventId,
      },
    };
  }
  const payload = entry.payload.safeParse(e.payload);
  if (!payload.success) {
    return {
      ok: false,
      error: { code: "bad_payload", message: `${e.eventType}: ${z.prettifyError(payload.error)}`, eventId: e.eventId },
    };
  }
  // Checked against the catalogue entry of its own type just above.
  return { ok: true, event: { ...e, eventType: e.eventType, payload: payload.data } as AnyEventEnvelope };
}

export interface NewEvent<T extends EventType> {
  eventId: string;
  eventType: T;
  tenantId: string;
  projectId: string;
  changeId?: string | null;
  taskId?: string | null;
  actor: Actor;
  resource: string;
  canonicalGeneration: number;
  causedBy?: string | null;
  correlationId: string;
  timestamp: Date;
  payload: EventPayload<T>;
}

/** Builds a validated envelope at the current catalogue version; a bad payload throws (a programming error). */
export function buildEvent<T extends EventType>(e: NewEvent<T>): EventEnvelope<T> {
  const entry = EVENT_CATALOGUE[e.eventType];
  const envelope = {
    eventId: e.eventId,
    eventType: e.eventType,
    eventVersion: entry.version,
    tenantId: e.tenantId,
    projectId: e.projectId,
    changeId: e.changeId ?? null,
    taskId: e.taskId ?? null,
    actor: e.actor,
    resource: e.resource,
    canonicalGeneration: e.canonicalGeneration,
    causedBy: e.causedBy ?? null,
    correlationId: e.correlationId,
    timestamp: e.timestamp.toISOString(),
    payload: entry.payload.parse(e.payload),
  };
  eventEnvelopeSchema.parse(envelope);
  return envelope as EventEnvelope<T>;
}
