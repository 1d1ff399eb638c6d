import { randomUUID } from "node:crypto";
import { DomainError, type WebhookDeliveryStatus, webhookRedeliveryId } from "@rhumbatron/core";
import type { EnqueueDeps } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { sendDelivery } from "./fan-out.ts";
import { webhookOf } from "./hooks.ts";

/**
 * A delivery's attempts and its log (docs/notifications.md): what the worker reads to
 * send one, how it records each attempt, the hook's delivery log, and Redeliver.
 */

/** What one attempt needs: the hook's URL and secret and the Event; null when the hook was removed. */
export interface DeliveryToSend {
  deliveryId: string;
  webhookId: string;
  url: string;
  secret: string;
  eventType: string;
  event: unknown;
  status: WebhookDeliveryStatus;
}

export async function deliveryToSend(db: Db, deliveryId: string): Promise<DeliveryToSend | null> {
  const d = await db.webhookDelivery.findUnique({
    where: { id: deliveryId },
    select: {
      id: true,
      eventType: true,
      event: true,
      status: true,
      webhook: { select: { id: true, url: true, secret: true } },
    },
  });
  if (!d) return null;
  return {
    deliveryId: d.id,
    webhookId: d.webhook.id,
    url: d.webhook.url,
    secret: d.webhook.secret,
    eventType: d.eventType,
    event: d.event,
    status: d.status as WebhookDeliveryStatus,
  };
}

export interface AttemptRecord {
  deliveryId: string;
  outcome: "succeeded" | "failed";
  httpStatus: number | null;
  durationMs: number;
  error: string | null;
  attemptedAt: Date;
  /** The delivery's status after this attempt, and when the queue sends the next one (retrying). */
  status: WebhookDeliveryStatus;
  nextAttemptAt: Date | null;
}

/**
 * Records one attempt (numbered after the delivery's last, under the delivery row's lock) and the
 * delivery's status. Nothing when the delivery was removed with its hook.
 */
export async function recordWebhookAttempt(ctx: TxContext, a: AttemptRecord): Promise<number | null> {
  const locked = await ctx.tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM webhook_deliveries WHERE id = ${a.deliveryId} FOR UPDATE`;
  if (!locked[0]) return null;
  const last = await ctx.tx.webhookAttempt.aggregate({ where: { deliveryId: a.deliveryId }, _max: { attempt: true } });
  const attempt = (last._max.attempt ?? 0) + 1;
  await ctx.tx.webhookAttempt.create({
    data: {
      deliveryId: a.deliveryId,
      attempt,
      outcome: a.outcome,
      httpStatus: a.httpStatus,
      durationMs: a.durationMs,
      error: a.error,
      attemptedAt: a.attemptedAt,
    },
  });
  await ctx.tx.webhookDelivery.update({
    where: { id: a.deliveryId },
    data: { status: a.status, nextAttemptAt: a.nextAttemptAt },
  });
  return attempt;
}

export interface DeliveryLogEntry {
  id: string;
  eventId: string;
  eventType: string;
  status: WebhookDeliveryStatus;
  nextAttemptAt: Date | null;
  redeliveryOf: string | null;
  requestedBy: { id: string; name: string | null } | null;
  createdAt: Date;
  attempts: {
    attempt: number;
    outcome: "succeeded" | "failed";
    httpStatus: number | null;
    durationMs: number;
    error: string | null;
    attemptedAt: Date;
  }[];
}

/** A hook's delivery log, newest first, each delivery with its attempts (first first). */
export async function listWebhookDeliveries(
  db: Db,
  q: { tenantId: string; webhookId: string; limit?: number },
): Promise<DeliveryLogEntry[]> {
  await webhookOf(db, q.tenantId, q.webhookId);
  const rows = await db.webhookDelivery.findMany({
    where: { webhookId: q.webhookId },
    orderBy: [{ createdAt: "desc" }, { id: "asc" }],
    take: Math.min(q.limit ?? 50, 200),
    select: {
      id: true,
      eventId: true,
      eventType: true,
      status: true,
      nextAttemptAt: true,
      redeliveryOf: true,
      requestedBy: true,
      createdAt: true,
      attempts: { orderBy: { attempt: "asc" } },
    },
  });
  const asked = [...new Set(rows.flatMap((r) => (r.requestedBy ? [r.requestedBy] : [])))];
  const people = await db.user.findMany({ where: { id: { in: asked } }, select: { id: true, name: true } });
  const names = new Map(people.map((p) => [p.id, p.name]));
  return rows.map((r) => ({
    id: r.id,
    eventId: r.eventId,
    eventType: r.eventType,
    status: r.status as WebhookDeliveryStatus,
    nextAttemptAt: r.nextAttemptAt,
    redeliveryOf: r.redeliveryOf,
    requestedBy: r.requestedBy ? { id: r.requestedBy, name: names.get(r.requestedBy) ?? null } : null,
    createdAt: r.createdAt,
    attempts: r.attempts.map(({ deliveryId: _, ...a }) => ({ ...a, outcome: a.outcome as "succeeded" | "failed" })),
  }));
}

/**
 * Redeliver: a new delivery of the same Event to the same hook, with an ID of its own (a receiver
 * that dedupes on X-Rhumbatron-Delivery takes it; the body's event.eventId is the same as before),
 * sent by a command of its own. A delivery that is not this tenant's is NOT_FOUND.
 */
export async function redeliverWebhookDelivery(
  db: Db,
  r: { tenantId: string; deliveryId: string; actorId: string },
  deps: EnqueueDeps,
): Promise<{ deliveryId: string; redeliveryOf: string; commandId: string }> {
  return withTransaction(db, async (ctx) => {
    const original = await ctx.tx.webhookDelivery.findFirst({
      where: { id: r.deliveryId, webhook: { project: { tenantId: r.tenantId } } },
      select: {
        id: true,
        webhookId: true,
        eventId: true,
        eventType: true,
        event: true,
        webhook: { select: { projectId: true } },
      },
    });
    if (!original) throw new DomainError("NOT_FOUND", `webhook delivery ${r.deliveryId} not found`);
    const id = webhookRedeliveryId(randomUUID());
    await ctx.tx.webhookDelivery.create({
      data: {
        id,
        webhookId: original.webhookId,
        eventId: original.eventId,
        eventType: original.eventType,
        event: original.event as object,
        redeliveryOf: original.id,
        requestedBy: r.actorId,
        createdAt: deps.now(),
      },
    });
    const sent = await sendDelivery(
      ctx,
      { id, webhookId: original.webhookId, eventId: original.eventId },
      original.webhook.projectId,
      deps,
    );
    return { deliveryId: id, redeliveryOf: original.id, commandId: sent.commandId };
  });
}

/** Deliveries one pruning statement deletes, and statements one maintenance tick runs at most. */
export const WEBHOOK_PRUNE_BATCH = 1000;
export const WEBHOOK_PRUNE_MAX_BATCHES = 50;

/**
 * Deletes finished deliveries (succeeded or failed) made before `before`, with their attempts (the
 * foreign key cascades), in batches of `batchSize`, at most `maxBatches` of them: a backlog larger
 * than that is finished by the next ticks. Pending and retrying deliveries are never deleted, however
 * old. Returns how many were deleted.
 */
export async function pruneWebhookDeliveries(
  db: Db,
  o: { before: Date; batchSize?: number; maxBatches?: number },
): Promise<number> {
  const batchSize = o.batchSize ?? WEBHOOK_PRUNE_BATCH;
  const maxBatches = o.maxBatches ?? WEBHOOK_PRUNE_MAX_BATCHES;
  let deleted = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    // SKIP LOCKED: a delivery whose row an attempt holds right now is left for the next tick.
    const n = await db.$executeRaw`
      DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries
        WHERE status IN ('succeeded', 'failed') AND created_at < ${o.before}
        LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)`;
    deleted += n;
    if (n < batchSize) break;
  }
  return deleted;
}
