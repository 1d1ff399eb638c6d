"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";

/** How often the header asks for the unread count: an approval waiting shows up within this, without a reload. */
export const UNREAD_REFETCH_MS = 15_000;

/** The header's Inbox link with the caller's unread count as a badge (none when nothing is unread). */
export function InboxLink({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const unread = useQuery(
    trpc.notifications.unreadCount.queryOptions(
      { tenantId },
      { refetchInterval: UNREAD_REFETCH_MS, refetchOnWindowFocus: true },
    ),
  );
  const n = unread.data?.unread ?? 0;
  return (
    <a
      href="/inbox"
      data-testid="nav-inbox"
      data-unread={unread.isSuccess ? n : undefined}
      aria-label={n > 0 ? `Inbox, ${n} unread` : "Inbox"}
      className="inline-flex items-center gap-1 whitespace-nowrap hover:text-slate-900 hover:underline"
    >
      Inbox
      {n > 0 && (
        <span
          data-testid="inbox-badge"
          className="min-w-5 rounded-full bg-red-600 px-1.5 text-center text-xs font-semibold text-white"
        >
          {n > 99 ? "99+" : n}
        </span>
      )}
    </a>
  );
}
