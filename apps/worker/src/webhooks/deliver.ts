import { decideDelivery, signWebhook, WEBHOOK_HEADERS, webhookBody } from "@rhumbatron/core";
import { deliveryToSend, recordWebhookAttempt } from "@rhumbatron/db";
import type { CommandHandler, EnqueueDeps } from "@rhumbatron/runtime";
import { withTransaction } from "@rhumbatron/runtime";
import { type PostResult, postWebhook } from "./post.ts";

/**
 * webhook.deliver (webhooks queue; docs/notifications.md): one attempt of one delivery.
 * The POST is outside any transaction (prepare); then:
 *  - a 2xx: the attempt and the delivery's `succeeded` are recorded in the transaction that acks the
 *    message, so a delivery succeeds once;
 *  - anything else: the attempt is recorded in a short transaction of its own (the ack's would roll
 *    it back with the failure) with the delivery `retrying`, or `failed` when this was the queue's
 *    last retry, and the handler fails, so the queue retries after its backoff or dead-letters the
 *    command for an operator.
 * Every attempt of a delivery carries the same X-Rhumbatron-Delivery and body; only the signature's
 * timestamp is new. A hook removed meanwhile sends nothing.
 */
export const USER_AGENT = "Rhumbatron-Webhook/1";

type Prepared = { sent: false } | { sent: true; result: PostResult; attemptedAt: Date };

export function webhookDeliverHandler(deps: EnqueueDeps): CommandHandler {
  return {
    commandTypes: ["webhook.deliver"],
    async prepare({ db, message, command, now }): Promise<Prepared> {
      const deliveryId = String(command.payload.deliveryId);
      const d = await deliveryToSend(db, deliveryId);
      // Removed with its hook, or already delivered (a Retry of a dead letter raced a late success).
      if (!d || d.status === "succeeded") return { sent: false };
      const body = webhookBody({ deliveryId: d.deliveryId, webhookId: d.webhookId, event: d.event });
      const t = Math.floor(now.getTime() / 1000);
      const headers = {
        "user-agent": USER_AGENT,
        [WEBHOOK_HEADERS.event]: d.eventType,
        [WEBHOOK_HEADERS.delivery]: d.deliveryId,
        [WEBHOOK_HEADERS.signature]: signWebhook(d.secret, t, body),
      };
      const result = await postWebhook(d.url, body, headers, {
        timeoutMs: deps.config.webhooks.timeoutSeconds * 1000,
        allowPrivate: deps.config.webhooks.allowPrivateTargets,
      });
      if (result.ok) return { sent: true, result, attemptedAt: now };
      const error = result.error ?? "failed";
      const next = decideDelivery({ kind: "failed", error }, message.deliveries, message.queue, deps.config, now);
      await withTransaction(db, (ctx) =>
        recordWebhookAttempt(ctx, {
          deliveryId,
          outcome: "failed",
          httpStatus: result.httpStatus,
          durationMs: result.durationMs,
          error,
          attemptedAt: now,
          status: next.action === "retry" ? "retrying" : "failed",
          nextAttemptAt: next.action === "retry" ? next.availableAt : null,
        }),
      );
      deps.log?.(
        { commandId: command.commandId, deliveryId, attempt: message.deliveries, next: next.action, error },
        "webhook delivery failed",
      );
      // Not the URL: it may carry a credential, and the dead letter is read by every operator.
      throw new Error(`webhook delivery ${deliveryId}: ${error}`);
    },
    async handle(ctx) {
      const p = ctx.prepared as Prepared | undefined;
      if (p?.sent) {
        await recordWebhookAttempt(ctx, {
          deliveryId: String(ctx.command.payload.deliveryId),
          outcome: "succeeded",
          httpStatus: p.result.httpStatus,
          durationMs: p.result.durationMs,
          error: null,
          attemptedAt: p.attemptedAt,
          status: "succeeded",
          nextAttemptAt: null,
        });
      }
      return "done";
    },
  };
}
