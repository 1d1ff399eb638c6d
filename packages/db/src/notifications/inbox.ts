import { DomainError, type NotificationKind } from "@rhumbatron/core";
import type { Db } from "../client.ts";

/**
 * A person's inbox in one tenant (docs/notifications.md): their notifications, newest
 * first, the unread count, and marking one or all read. Every query is scoped to (tenant, user), so
 * another person's notification is NOT_FOUND, never someone else's to read or mark.
 */
export interface InboxOwner {
  tenantId: string;
  userId: string;
}

export interface InboxItem {
  id: string;
  kind: NotificationKind;
  title: string;
  detail: string;
  projectId: string;
  projectName: string | null;
  changeId: string | null;
  candidateId: string | null;
  deadLetterId: string | null;
  /** The person it is about, by name (the requester, the approver, whoever promoted); null for none. */
  actor: { id: string; name: string } | null;
  occurredAt: Date;
  readAt: Date | null;
}

export const INBOX_MAX_LIMIT = 200;

export async function listNotifications(
  db: Db,
  q: InboxOwner & { unreadOnly?: boolean; limit?: number },
): Promise<InboxItem[]> {
  const rows = await db.notification.findMany({
    where: { tenantId: q.tenantId, userId: q.userId, ...(q.unreadOnly ? { readAt: null } : {}) },
    orderBy: [{ occurredAt: "desc" }, { id: "asc" }],
    take: Math.min(q.limit ?? 50, INBOX_MAX_LIMIT),
  });
  const actorIds = [...new Set(rows.flatMap((r) => (r.actorId ? [r.actorId] : [])))];
  const projectIds = [...new Set(rows.map((r) => r.projectId))];
  const [users, projects] = await Promise.all([
    db.user.findMany({ where: { id: { in: actorIds } }, select: { id: true, name: true } }),
    db.project.findMany({ where: { id: { in: projectIds }, tenantId: q.tenantId }, select: { id: true, name: true } }),
  ]);
  const names = new Map(users.map((u) => [u.id, u.name]));
  const projectNames = new Map(projects.map((p) => [p.id, p.name]));
  return rows.map((r) => {
    const actorName = r.actorId ? names.get(r.actorId) : undefined;
    return {
      id: r.id,
      kind: r.kind as NotificationKind,
      title: r.title,
      detail: r.detail,
      projectId: r.projectId,
      projectName: projectNames.get(r.projectId) ?? null,
      changeId: r.changeId,
      candidateId: r.candidateId,
      deadLetterId: r.deadLetterId,
      // An actor who is not a person of this system (an Agent, the landing queue) is not named.
      actor: r.actorId && actorName !== undefined ? { id: r.actorId, name: actorName } : null,
      occurredAt: r.occurredAt,
      readAt: r.readAt,
    };
  });
}

export function countUnread(db: Db, q: InboxOwner): Promise<number> {
  return db.notification.count({ where: { tenantId: q.tenantId, userId: q.userId, readAt: null } });
}

/**
 * Marks one notification (`notificationId`) or all of them (`all`) read; a notification read before
 * keeps its first read time. One that is not the caller's in this tenant is NOT_FOUND.
 */
export async function markNotificationsRead(
  db: Db,
  q: InboxOwner & ({ notificationId: string } | { all: true }),
  now: Date,
): Promise<{ marked: number; unread: number }> {
  const owner = { tenantId: q.tenantId, userId: q.userId };
  if ("notificationId" in q) {
    const found = await db.notification.findFirst({ where: { ...owner, id: q.notificationId }, select: { id: true } });
    if (!found) throw new DomainError("NOT_FOUND", `notification ${q.notificationId} not found`);
  }
  const where = { ...owner, readAt: null, ...("notificationId" in q ? { id: q.notificationId } : {}) };
  const marked = (await db.notification.updateMany({ where, data: { readAt: now } })).count;
  return { marked, unread: await countUnread(db, owner) };
}
