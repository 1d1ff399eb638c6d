import { idSchema, webhookEventTypesSchema, webhookUrlSchema } from "@rhumbatron/core";
import {
  createWebhook,
  listWebhookDeliveries,
  listWebhooks,
  redeliverWebhookDelivery,
  removeWebhook,
  updateWebhook,
} from "@rhumbatron/db";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

/**
 * A project's outgoing webhooks (docs/notifications.md): admins only, for they point
 * the project's Events at a URL and see what receivers answered. The secret is in `create`'s answer
 * and nowhere else. A hook, a delivery or a project of another tenant is NOT_FOUND.
 */
export const webhooksRouter = router({
  list: tenantProcedure("admin")
    .input(z.object({ projectId: idSchema }))
    .query(({ ctx, input }) => listWebhooks(ctx.db, { tenantId: input.tenantId, projectId: input.projectId })),
  /** Subscribes `url` to `eventTypes`; the answer carries the signing secret, shown once. */
  create: tenantProcedure("admin")
    .input(z.object({ projectId: idSchema, url: webhookUrlSchema, eventTypes: webhookEventTypesSchema }))
    .mutation(({ ctx, input }) =>
      createWebhook(
        ctx.db,
        {
          tenantId: input.tenantId,
          projectId: input.projectId,
          url: input.url,
          eventTypes: input.eventTypes,
          actorId: ctx.caller.userId,
        },
        ctx.services,
      ),
    ),
  /**
   * Changes the hook's URL and/or Event types (create's checks), or pauses (`paused: true`) or
   * resumes it (`paused: false`): a paused hook gets no new deliveries, and Events that happen
   * while it is paused are never sent to it. The secret stays.
   */
  update: tenantProcedure("admin")
    .input(
      z
        .object({
          webhookId: idSchema,
          url: webhookUrlSchema.optional(),
          eventTypes: webhookEventTypesSchema.optional(),
          paused: z.boolean().optional(),
        })
        .refine((u) => u.url !== undefined || u.eventTypes !== undefined || u.paused !== undefined, {
          error: "give a url, eventTypes or paused to change",
        }),
    )
    .mutation(({ ctx, input }) =>
      updateWebhook(
        ctx.db,
        {
          tenantId: input.tenantId,
          webhookId: input.webhookId,
          url: input.url,
          eventTypes: input.eventTypes,
          paused: input.paused,
        },
        ctx.services,
      ),
    ),
  /** Removes the hook and its delivery log; nothing more is sent to it. */
  remove: tenantProcedure("admin")
    .input(z.object({ webhookId: idSchema }))
    .mutation(({ ctx, input }) => removeWebhook(ctx.db, { tenantId: input.tenantId, webhookId: input.webhookId })),
  /** The hook's delivery log, newest first: status, each attempt's HTTP status, duration, error and time. */
  deliveries: tenantProcedure("admin")
    .input(z.object({ webhookId: idSchema, limit: z.number().int().min(1).max(200).default(50) }))
    .query(({ ctx, input }) =>
      listWebhookDeliveries(ctx.db, { tenantId: input.tenantId, webhookId: input.webhookId, limit: input.limit }),
    ),
  /** A new delivery of the same Event (a delivery ID of its own), sent through the queue. */
  redeliver: tenantProcedure("admin")
    .input(z.object({ deliveryId: idSchema }))
    .mutation(({ ctx, input }) =>
      redeliverWebhookDelivery(
        ctx.db,
        { tenantId: input.tenantId, deliveryId: input.deliveryId, actorId: ctx.caller.userId },
        ctx.services,
      ),
    ),
});
