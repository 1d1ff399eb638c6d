"use client";

import type { FeedEvent as FeedRow } from "@rhumbatron/db";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useState } from "react";
import { mergeFeed } from "../../lib/feed.ts";
import { useTRPC } from "../../trpc/client.tsx";

/**
 * The project's live event feed: a tRPC subscription over server-sent events. The server sends the
 * recent rows first, then each new one as the projector writes it; on a dropped connection the
 * browser reconnects with the last ID it saw. `data-state`: connecting, live or error.
 */
export function EventFeed({
  tenantId,
  projectId,
  onEvent,
}: {
  tenantId: string;
  projectId: string;
  /** Called for each row, so the page can refresh what the Event changed (counts, lists). */
  onEvent?: (row: FeedRow) => void;
}) {
  const trpc = useTRPC();
  const [rows, setRows] = useState<FeedRow[]>([]);
  const sub = useSubscription(
    trpc.projects.events.subscriptionOptions(
      { tenantId, projectId },
      {
        onData: (tracked) => {
          setRows((current) => mergeFeed(current, tracked.data));
          onEvent?.(tracked.data);
        },
      },
    ),
  );
  const state = sub.status === "error" ? "error" : sub.status === "pending" ? "live" : "connecting";

  return (
    <div data-testid="event-feed" data-state={state} data-count={rows.length}>
      <p className="mb-2 flex items-center gap-2 text-xs text-slate-500">
        <span
          aria-hidden
          className={`inline-block h-2 w-2 rounded-full ${
            state === "live" ? "bg-emerald-500" : state === "error" ? "bg-red-500" : "animate-pulse bg-amber-400"
          }`}
        />
        <span data-testid="event-feed-status">
          {state === "live" ? "Live" : state === "error" ? "Disconnected" : "Connecting…"}
        </span>
      </p>
      {sub.status === "error" && (
        <div role="alert" className="mb-2 rounded border border-red-200 bg-red-50 p-2 text-sm text-red-900">
          The feed stopped: {sub.error?.message}{" "}
          <button type="button" onClick={() => sub.reset()} className="underline">
            Reconnect
          </button>
        </div>
      )}
      {rows.length === 0 ? (
        <p
          data-testid="event-feed-empty"
          className="rounded border border-dashed border-slate-300 p-4 text-center text-sm text-slate-500"
        >
          {state === "connecting" ? "Loading events…" : "No events yet. They appear here as they happen."}
        </p>
      ) : (
        <ol className="max-h-[28rem] divide-y divide-slate-100 overflow-y-auto text-sm">
          {rows.map((e) => (
            <EventRow key={e.id} e={e} projectId={projectId} />
          ))}
        </ol>
      )}
    </div>
  );
}

/** One Event: when, its type, its Change if any, what happened and who did it. */
function EventRow({ e, projectId }: { e: FeedRow; projectId: string }) {
  return (
    <li data-testid="event-row" data-event-type={e.eventType} className="flex gap-3 py-2">
      <time
        dateTime={e.occurredAt.toISOString()}
        title={e.occurredAt.toLocaleString()}
        className="w-20 shrink-0 font-mono text-xs text-slate-500"
      >
        {e.occurredAt.toLocaleTimeString()}
      </time>
      <div className="min-w-0">
        <div className="flex flex-wrap items-center gap-2">
          <span className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-700">{e.eventType}</span>
          {e.changeId && (
            <a
              href={`/projects/${projectId}/changes/${e.changeId}`}
              className="font-mono text-xs text-sky-800 underline"
            >
              {e.changeId}
            </a>
          )}
        </div>
        <p className="break-words text-slate-700">{e.summary}</p>
        <p data-testid="feed-actor" className="text-xs text-slate-400" title={e.actor}>
          {e.actorName}
        </p>
      </div>
    </li>
  );
}
