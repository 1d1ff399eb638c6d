import { type AnyEventEnvelope, commandIds, newCommand, webhookDeliveryId, webhookMaySend } from "@rhumbatron/core";
import type { DeliveredEvent, Subscription } from "@rhumbatron/runtime";
import { type EnqueueDeps, enqueueCommand } from "@rhumbatron/runtime";
import type { TxContext } from "../transaction.ts";

/**
 * Webhook deliveries (docs/notifications.md). The fan-out subscription turns each Event
 * into one delivery per hook subscribed to its type, and sends a `webhook.deliver` command for it in
 * the claiming transaction. The delivery's ID is stable in (hook, Event) and its row is written
 * before the command, so a replay of the Event finds the row and sends nothing; the command's ID is
 * the delivery's, so its retries are the same command. A hook hears only Events from its creation on
 * (and from its latest resume on); a paused hook gets no new deliveries, and what was queued for it
 * before the pause still runs.
 */
export const WEBHOOK_FANOUT = "webhook-fanout";

/** Sends a delivery's `webhook.deliver` command in the caller's transaction. */
export function sendDelivery(
  ctx: TxContext,
  d: { id: string; webhookId: string; eventId: string },
  projectId: string,
  deps: EnqueueDeps,
) {
  // No changeId: deliveries to receivers do not count against a Change's daily command cap.
  const command = newCommand("webhook.deliver", {
    commandId: commandIds.webhookDeliver(d.id),
    projectId,
    payload: { webhookId: d.webhookId, deliveryId: d.id, eventId: d.eventId },
  });
  return enqueueCommand(ctx, command, deps);
}

interface HookToFanOut {
  id: string;
  eventTypes: string[];
  createdAt: Date;
  resumedAt: Date | null;
}

/** The project's hooks that are not paused, read once for a group of its Events. */
function hooksOf(ctx: TxContext, projectId: string): Promise<HookToFanOut[]> {
  return ctx.tx.webhook.findMany({
    where: { projectId, paused: false },
    select: { id: true, eventTypes: true, createdAt: true, resumedAt: true },
    orderBy: { id: "asc" },
  });
}

/**
 * Whether the hook hears an Event of `at`: it happened after the hook was made and after its latest
 * resume, so an Event that happened while the hook was paused is not sent when the fan-out reaches
 * it late.
 */
const hears = (h: HookToFanOut, at: Date) => h.createdAt <= at && (h.resumedAt === null || h.resumedAt <= at);

/**
 * The Event's deliveries, one per hook (not paused) subscribed to its type since before it
 * happened; the new IDs. `hooks` must be hooksOf's answer (paused hooks left out).
 */
export async function fanOutEvent(
  ctx: TxContext,
  e: AnyEventEnvelope,
  deps: EnqueueDeps,
  hooks?: HookToFanOut[],
): Promise<string[]> {
  if (!webhookMaySend(e)) return [];
  const at = new Date(e.timestamp);
  const subscribed = (hooks ?? (await hooksOf(ctx, e.projectId))).filter(
    (h) => h.eventTypes.includes(e.eventType) && hears(h, at),
  );
  const made: string[] = [];
  for (const hook of subscribed) {
    const id = webhookDeliveryId(hook.id, e.eventId);
    const inserted = await ctx.tx.$executeRaw`
      INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, event, created_at)
      VALUES (${id}, ${hook.id}, ${e.eventId}, ${e.eventType}, ${JSON.stringify(e)}::jsonb, ${deps.now()})
      ON CONFLICT (id) DO NOTHING`;
    if (inserted === 0) continue;
    await sendDelivery(ctx, { id, webhookId: hook.id, eventId: e.eventId }, e.projectId, deps);
    made.push(id);
  }
  return made;
}

export function webhookFanOutSubscription(deps: EnqueueDeps): Subscription {
  return {
    name: WEBHOOK_FANOUT,
    // One group per project (its hooks are read once for the group); a failure holds back only its own.
    group(events) {
      const groups = new Map<string, DeliveredEvent[]>();
      for (const d of events) groups.set(d.event.projectId, [...(groups.get(d.event.projectId) ?? []), d]);
      return [...groups.values()];
    },
    async apply(ctx, events) {
      const projectId = events[0]?.event.projectId;
      if (!projectId) return;
      const hooks = await hooksOf(ctx, projectId);
      if (hooks.length === 0) return;
      for (const { event } of events) await fanOutEvent(ctx, event, deps, hooks);
    },
  };
}
