import { idSchema } from "@rhumbatron/core";
import { countUnread, INBOX_MAX_LIMIT, listNotifications, markNotificationsRead } from "@rhumbatron/db";
import { z } from "zod";
import { router, tenantProcedure } from "../trpc.ts";

/**
 * The caller's inbox in one tenant (docs/notifications.md). Everyone has one (viewer
 * role and above); every procedure reads and writes the caller's own notifications only, so another
 * person's notification is NOT_FOUND.
 */
export const notificationsRouter = router({
  /** Newest first; `unreadOnly` leaves out what was read. */
  list: tenantProcedure("viewer")
    .input(
      z.object({
        unreadOnly: z.boolean().default(false),
        limit: z.number().int().min(1).max(INBOX_MAX_LIMIT).default(50),
      }),
    )
    .query(({ ctx, input }) =>
      listNotifications(ctx.db, {
        tenantId: input.tenantId,
        userId: ctx.caller.userId,
        unreadOnly: input.unreadOnly,
        limit: input.limit,
      }),
    ),
  /** The badge's number. */
  unreadCount: tenantProcedure("viewer").query(async ({ ctx, input }) => ({
    unread: await countUnread(ctx.db, { tenantId: input.tenantId, userId: ctx.caller.userId }),
  })),
  /** Marks one notification read (`notificationId`) or all of them (`all: true`); a repeat changes nothing. */
  markRead: tenantProcedure("viewer")
    .input(
      z
        .object({ notificationId: idSchema.optional(), all: z.literal(true).optional() })
        .refine((v) => (v.notificationId === undefined) !== (v.all === undefined), {
          error: "give either notificationId or all: true",
        }),
    )
    .mutation(({ ctx, input }) => {
      const owner = { tenantId: input.tenantId, userId: ctx.caller.userId };
      const which =
        input.notificationId === undefined ? { all: true as const } : { notificationId: input.notificationId };
      return markNotificationsRead(ctx.db, { ...owner, ...which }, ctx.services.now());
    }),
});
