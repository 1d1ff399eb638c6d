import { NOTIFICATION_ACTOR_PHRASE } from "@rhumbatron/core";
import type { InboxItem, MarkReadResult } from "./client.ts";

/** `rhumbatron inbox` as people read it (docs/notifications.md); `--json` prints the items. */

const when = (d: Date | string) => new Date(d).toISOString().replace("T", " ").slice(0, 16);

/** What the notification points at, as the CLI can name it. */
function subject(n: InboxItem): string {
  const where = n.projectName ?? n.projectId;
  if (n.deadLetterId) return `dead letter ${n.deadLetterId} in ${where}`;
  if (n.candidateId) return `candidate ${n.candidateId} in ${where}: rhumbatron candidate show ${n.candidateId}`;
  return n.changeId ? `change ${n.changeId} in ${where}` : where;
}

/** One notification: a `*` when unread, the time, the title and who; then its detail and what it concerns. */
export function formatInboxItem(n: InboxItem): string {
  const who = n.actor ? ` (${NOTIFICATION_ACTOR_PHRASE[n.kind]} ${n.actor.name})` : "";
  return [
    `${n.readAt ? " " : "*"} ${when(n.occurredAt)}  ${n.title}${who}`,
    `    ${n.detail}`,
    `    ${subject(n)}`,
  ].join("\n");
}

export function formatInbox(items: InboxItem[], unread: number, marked?: MarkReadResult): string {
  const head = items.length === 0 ? "your inbox is empty" : `${unread} unread, newest first (* unread)`;
  const lines = [head, ...items.map(formatInboxItem)];
  if (marked) lines.push(`marked ${marked.marked} read; ${marked.unread} unread`);
  return lines.join("\n");
}
