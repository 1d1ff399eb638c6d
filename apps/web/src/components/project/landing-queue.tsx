"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";
import { Empty, NotReady } from "../query-state.tsx";

/** How often the landing queue refreshes (it moves as checks finish and Changes land). */
export const LANDING_REFETCH_MS = 3_000;

const WAIT_CLASSES: Record<string, string> = {
  landing: "bg-emerald-100 text-emerald-800",
  approval: "bg-amber-100 text-amber-900",
  conflict: "bg-red-100 text-red-800",
  rejected: "bg-red-100 text-red-800",
  blocked_task: "bg-red-100 text-red-800",
};

/** What stops a Change that no amount of waiting moves on: a person has to act (its detail says how). */
const NEEDS_A_PERSON: Record<string, string> = {
  rejected: "rejected: needs a person",
  conflict: "conflicted: needs a person",
  blocked_task: "a Task is stuck: needs a person",
};

function waitLabel(e: { ready: boolean; waitingFor: string }): string {
  if (e.ready) return "ready to land";
  return NEEDS_A_PERSON[e.waitingFor] ?? `waits for ${e.waitingFor.replace("_", " ")}`;
}

/**
 * The project's landing queue: every Change that lands when ready, in the order it will land, with
 * the one thing it waits for and since when. Updated live.
 */
export function LandingQueue({ tenantId, projectId }: { tenantId: string; projectId: string }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.landing.queue.queryOptions({ tenantId, projectId }, { refetchInterval: LANDING_REFETCH_MS }));
  if (!q.isSuccess)
    return <NotReady query={q} testId="landing-queue" what="the landing queue" label="Loading the landing queue…" />;
  if (q.data.length === 0) {
    return (
      <Empty testId="landing-queue">
        No Change is waiting to land. Turn on “Land when ready” on a Change (or create it with --land) to queue it.
      </Empty>
    );
  }
  return (
    <ol data-testid="landing-queue" data-state="ready" className="divide-y divide-slate-100 text-sm">
      {q.data.map((e) => (
        <li
          key={e.changeId}
          data-testid="landing-entry"
          data-change-id={e.changeId}
          data-waiting-for={e.waitingFor}
          className="flex flex-wrap items-baseline gap-3 py-1.5"
        >
          <span className="w-6 text-right font-mono text-slate-500">{e.position}</span>
          <a href={`/projects/${projectId}/changes/${e.changeId}`} className="font-medium text-sky-800 underline">
            {e.title}
          </a>
          <span
            className={`rounded px-1.5 py-0.5 text-xs ${WAIT_CLASSES[e.waitingFor] ?? "bg-slate-100 text-slate-700"}`}
          >
            {waitLabel(e)}
          </span>
          <span className="text-xs text-slate-600">{e.detail}</span>
          <time dateTime={new Date(e.since).toISOString()} className="ml-auto text-xs text-slate-400">
            since {new Date(e.since).toLocaleTimeString()}
          </time>
        </li>
      ))}
    </ol>
  );
}
