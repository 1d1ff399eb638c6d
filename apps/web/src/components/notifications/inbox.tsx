"use client";

import { NOTIFICATION_ACTOR_PHRASE } from "@rhumbatron/core";
import type { InboxItem } from "@rhumbatron/db";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../../trpc/client.tsx";
import { ActionError } from "../notice.tsx";
import { Empty, NotReady, Panel } from "../query-state.tsx";
import { UNREAD_REFETCH_MS } from "./inbox-link.tsx";

/** Where a notification takes its reader: the Candidate to approve or read, the Change, or Operations. */
export function notificationHref(n: Pick<InboxItem, "projectId" | "changeId" | "candidateId" | "deadLetterId">) {
  if (n.deadLetterId) return "/operations";
  if (n.candidateId) return `/projects/${n.projectId}/candidates/${n.candidateId}`;
  if (n.changeId) return `/projects/${n.projectId}/changes/${n.changeId}`;
  return `/projects/${n.projectId}`;
}

const FILTERS = ["unread", "all"] as const;
type Filter = (typeof FILTERS)[number];

/**
 * The caller's inbox (docs/notifications.md): approvals waiting for them, their
 * Changes' outcomes, dead letters for operators. Opening one marks it read; Mark all read empties
 * the badge. It refreshes itself as the header's badge does.
 */
export function Inbox({ tenantId }: { tenantId: string }) {
  const { filter, setFilter, list, markRead } = useInbox(tenantId);
  const tabs = (
    <div className="flex items-center gap-2 text-xs">
      <div className="flex gap-1" role="tablist">
        {FILTERS.map((f) => (
          <button
            key={f}
            type="button"
            role="tab"
            aria-selected={f === filter}
            data-testid={`inbox-filter-${f}`}
            onClick={() => setFilter(f)}
            className={`rounded px-2 py-1 ${f === filter ? "bg-slate-900 text-white" : "bg-slate-100 text-slate-700"}`}
          >
            {f}
          </button>
        ))}
      </div>
      <button
        type="button"
        data-testid="mark-all-read"
        disabled={markRead.isPending}
        onClick={() => markRead.mutate({ tenantId, all: true })}
        className="rounded border border-slate-300 bg-white px-2 py-1 font-medium disabled:opacity-50"
      >
        Mark all read
      </button>
    </div>
  );
  let body: React.ReactNode;
  if (!list.isSuccess) body = <NotReady query={list} testId="inbox" what="your inbox" label="Loading your inbox…" />;
  else if (list.data.length === 0)
    body = <Empty testId="inbox">{filter === "unread" ? "Nothing unread." : "Nothing here yet."}</Empty>;
  else
    body = (
      <ul data-testid="inbox" data-state="ready" className="divide-y divide-slate-100">
        {list.data.map((n) => (
          <NotificationItem key={n.id} n={n} tenantId={tenantId} markRead={markRead} />
        ))}
      </ul>
    );
  return (
    <Panel title="Notifications" testId="inbox-panel" actions={tabs}>
      {markRead.isError && <ActionError className="mb-2">{markRead.error.message}</ActionError>}
      {body}
    </Panel>
  );
}

type InboxState = ReturnType<typeof useInbox>;
type InboxRow = NonNullable<InboxState["list"]["data"]>[number];

/** The notifications under the chosen filter, refreshed as the header's badge is, and the way to mark them read. */
function useInbox(tenantId: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [filter, setFilter] = useState<Filter>("unread");
  const list = useQuery(
    trpc.notifications.list.queryOptions(
      { tenantId, unreadOnly: filter === "unread", limit: 100 },
      { refetchInterval: UNREAD_REFETCH_MS },
    ),
  );
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.notifications.pathKey() });
  const markRead = useMutation(trpc.notifications.markRead.mutationOptions({ onSettled: refresh }));
  return { filter, setFilter, list, markRead };
}

/** One notification: its link (opening it marks it read), detail, who did it, where and when. */
function NotificationItem({
  n,
  tenantId,
  markRead,
}: {
  n: InboxRow;
  tenantId: string;
  markRead: InboxState["markRead"];
}) {
  return (
    <li
      data-testid="notification"
      data-notification-id={n.id}
      data-kind={n.kind}
      data-read={n.readAt ? "true" : "false"}
      className="flex items-start justify-between gap-3 py-3 text-sm"
    >
      <div className="min-w-0">
        <a
          href={notificationHref(n)}
          data-testid="notification-link"
          // Opening it is reading it: the mark is sent, then the page changes (a request still in
          // flight when the page unloads may be dropped). A new tab opens it without marking it.
          onClick={async (e) => {
            if (n.readAt || e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
            e.preventDefault();
            await markRead.mutateAsync({ tenantId, notificationId: n.id }).catch(() => {});
            window.location.assign(notificationHref(n));
          }}
          className={`hover:underline ${n.readAt ? "text-slate-700" : "font-semibold text-slate-900"}`}
        >
          {!n.readAt && <span className="mr-1 inline-block h-2 w-2 rounded-full bg-red-600" aria-hidden />}
          {n.title}
        </a>
        <p className="text-slate-600">{n.detail}</p>
        <p className="text-xs text-slate-500">
          {n.actor && (
            <span data-testid="notification-actor">
              {NOTIFICATION_ACTOR_PHRASE[n.kind]} {n.actor.name} ·{" "}
            </span>
          )}
          {n.projectName ?? n.projectId} · {n.occurredAt.toLocaleString()}
        </p>
      </div>
      {!n.readAt && (
        <button
          type="button"
          data-testid="mark-read"
          disabled={markRead.isPending}
          onClick={() => markRead.mutate({ tenantId, notificationId: n.id })}
          className="shrink-0 rounded border border-slate-300 bg-white px-2 py-0.5 text-xs disabled:opacity-50"
        >
          Mark read
        </button>
      )}
    </li>
  );
}
