import { z } from "zod";
import { EVENT_TYPES, type EventType } from "../events/catalogue.ts";
import type { EventEnvelope } from "../events/envelope.ts";
import { sha256, toHex } from "../events/hash.ts";
import { hasNoNul, NUL_MESSAGE } from "../input.ts";

/**
 * A project's outgoing webhooks (docs/notifications.md): an admin subscribes a URL to a
 * set of Event types; each matching Event becomes one delivery, sent by the `webhook.deliver`
 * command on the webhooks queue, signed with the hook's secret.
 */
export const WEBHOOK_URL_MAX_LENGTH = 2000;

export const webhookUrlSchema = z
  .url({ protocol: /^https?$/, error: "give an http:// or https:// URL for the webhook" })
  .max(WEBHOOK_URL_MAX_LENGTH)
  .refine(hasNoNul, { error: NUL_MESSAGE });

/** The Event types a hook is subscribed to: at least one, each from the catalogue, each once. */
export const webhookEventTypesSchema = z
  .array(z.enum(EVENT_TYPES as [EventType, ...EventType[]]))
  .min(1, "subscribe the webhook to at least one Event type")
  .max(EVENT_TYPES.length)
  .refine((types) => new Set(types).size === types.length, { error: "name each Event type once" });

/**
 * A delivery's status: `pending` until its first attempt; `retrying` after a failed attempt with
 * retries left (the queue sends it again after its backoff); `succeeded` on a 2xx answer; `failed`
 * when the last retry failed (the command is dead-lettered for an operator).
 */
export const WEBHOOK_DELIVERY_STATUSES = ["pending", "retrying", "succeeded", "failed"] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/**
 * The ID of a hook's first delivery of an Event: stable in (hook, Event), so the fan-out that makes
 * it can run again and make nothing new, and its command ID (commandIds.webhookDeliver) is stable
 * too. A Redeliver makes a new delivery with an ID of its own (webhookRedeliveryId).
 */
export function webhookDeliveryId(webhookId: string, eventId: string): string {
  return `whd_${toHex(sha256(new TextEncoder().encode(`${webhookId}\u0000${eventId}`)).subarray(0, 16))}`;
}

/** A Redelivery's ID, from a random UUID the caller makes (core makes no randomness of its own). */
export function webhookRedeliveryId(uuid: string): string {
  return `whd_${uuid.replace(/-/g, "")}`;
}

/**
 * What a delivery POSTs: the delivery, the hook, and the Event envelope as it was written (its
 * `eventId` is the same in every delivery of the Event, a Redeliver's too). The same text on every
 * attempt of one delivery, so only the signature's timestamp differs between retries.
 */
export function webhookBody(d: { deliveryId: string; webhookId: string; event: EventEnvelope | unknown }): string {
  return JSON.stringify({ deliveryId: d.deliveryId, webhookId: d.webhookId, event: d.event });
}

/**
 * Whether an Event may go out to webhooks. A dead letter of a webhook delivery does not: a hook
 * subscribed to dead_letter.recorded whose receiver is down would otherwise dead-letter a delivery
 * of its own dead letter, and so on forever. Operators still see it (Operations, their inbox).
 */
export function webhookMaySend(e: { eventType: string; payload: unknown }): boolean {
  if (e.eventType !== "dead_letter.recorded") return true;
  return (e.payload as { commandType?: string }).commandType !== "webhook.deliver";
}
