import { parsePolicy } from "../policy.ts";
import type { ClientBase } from "./base.ts";
import type { InboxItem, MarkReadResult, PolicyUpdateResult, ProjectPolicy } from "./types.ts";

/** The caller's inbox and the project's policy. */
export function inboxMethods({ trpc, call, tenantId }: ClientBase) {
  return {
    /** The caller's inbox in the tenant, newest first; `unreadOnly` leaves out what was read. */
    async inbox(options: { unreadOnly?: boolean; limit?: number } = {}): Promise<InboxItem[]> {
      const t = await tenantId();
      return call(() => trpc.notifications.list.query({ tenantId: t, ...options }));
    },

    /** How many of the caller's notifications are unread. */
    async unreadCount(): Promise<number> {
      const t = await tenantId();
      return (await call(() => trpc.notifications.unreadCount.query({ tenantId: t }))).unread;
    },

    /** Marks one of the caller's notifications read (another person's is NOT_FOUND); a repeat marks nothing. */
    async markRead(notificationId: string): Promise<MarkReadResult> {
      const t = await tenantId();
      return call(() => trpc.notifications.markRead.mutate({ tenantId: t, notificationId }));
    },

    /** Marks every notification of the caller's inbox read. */
    async markAllRead(): Promise<MarkReadResult> {
      const t = await tenantId();
      return call(() => trpc.notifications.markRead.mutate({ tenantId: t, all: true }));
    },

    /** The project's active verification policy: its version and document (version 1: the defaults). */
    async getPolicy(projectId: string): Promise<ProjectPolicy> {
      const t = await tenantId();
      return call(() => trpc.policy.get.query({ tenantId: t, projectId }));
    },

    /** Every version of the project's policy, newest first, with who made it and when. */
    async policyHistory(projectId: string, options: { limit?: number } = {}): Promise<ProjectPolicy[]> {
      const t = await tenantId();
      return call(() => trpc.policy.history.query({ tenantId: t, projectId, ...options }));
    },

    /**
     * Makes `document` the project's policy, as a new version (admin role). Checked here with the
     * server's own schema first: a bad document throws BAD_REQUEST naming the fields and sends
     * nothing. `expectedVersion`: the version it was edited from; when another edit landed first the
     * server answers CONFLICT and writes nothing. The same document again is `changed: false`.
     */
    async setPolicy(
      projectId: string,
      document: unknown,
      options: { expectedVersion?: number } = {},
    ): Promise<PolicyUpdateResult> {
      const parsed = parsePolicy(document);
      const t = await tenantId();
      return call(() => trpc.policy.update.mutate({ tenantId: t, projectId, document: parsed, ...options }));
    },
  };
}
