"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
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
  paused: "bg-amber-100 text-amber-900",
  attempt_pick: "bg-amber-100 text-amber-900",
  stack: "bg-sky-100 text-sky-800",
};

/** What stops a Change that no amount of waiting moves on: a person has to act (its detail says how). */
const NEEDS_A_PERSON: Record<string, string> = {
  rejected: "rejected: needs a person",
  conflict: "conflicted: needs a person",
  blocked_task: "a Task is stuck: needs a person",
  attempt_pick: "attempts wait for a pick: needs a person",
};

function waitLabel(e: { ready: boolean; waitingFor: string }): string {
  if (e.ready) return "ready to land";
  if (e.waitingFor === "stack") return "verified: lands after the one below";
  return NEEDS_A_PERSON[e.waitingFor] ?? `waits for ${e.waitingFor.replace("_", " ")}`;
}

/**
 * The project's landing queue: every Change that lands when ready, in the order it will land, with
 * the one thing it waits for and since when. Updated live.
 */
export function LandingQueue({
  tenantId,
  projectId,
  canControl = false,
}: {
  tenantId: string;
  projectId: string;
  /** An admin: pause, drain and resume buttons. */
  canControl?: boolean;
}) {
  return (
    <div className="space-y-2">
      <QueueControls tenantId={tenantId} projectId={projectId} canControl={canControl} />
      <QueueEntries tenantId={tenantId} projectId={projectId} canControl={canControl} />
    </div>
  );
}

const STATE_WORDS: Record<string, string> = {
  running: "Running: ready Changes land in order.",
  paused: "Paused: nothing lands until an admin resumes it.",
  draining: "Draining: only what was verifying when the drain began lands; nothing that starts later.",
};

/** The queue's state, and for an admin the buttons that change it (each an Event on the project). */
function QueueControls({
  tenantId,
  projectId,
  canControl,
}: {
  tenantId: string;
  projectId: string;
  canControl: boolean;
}) {
  const trpc = useTRPC();
  const client = useQueryClient();
  const status = useQuery(
    trpc.landing.status.queryOptions({ tenantId, projectId }, { refetchInterval: LANDING_REFETCH_MS }),
  );
  const set = useMutation(
    trpc.landing.setState.mutationOptions({
      onSuccess: () => client.invalidateQueries({ queryKey: trpc.landing.pathKey() }),
    }),
  );
  if (!status.isSuccess) return null;
  const state = status.data.state;
  const actions = (
    [
      ["paused", "Pause"],
      ["draining", "Drain"],
      ["running", "Resume"],
    ] as const
  ).filter(([to]) => to !== state);
  return (
    <div data-testid="landing-queue-state" data-state={state} className="flex flex-wrap items-center gap-2 text-sm">
      <span className={state === "running" ? "text-slate-600" : "rounded bg-amber-100 px-1.5 py-0.5 text-amber-900"}>
        {STATE_WORDS[state]}
        {status.data.since && state !== "running" ? ` Since ${new Date(status.data.since).toLocaleString()}.` : ""}
      </span>
      {canControl &&
        actions.map(([to, label]) => (
          <button
            key={to}
            type="button"
            data-testid={`landing-queue-${label.toLowerCase()}`}
            disabled={set.isPending}
            onClick={() => set.mutate({ tenantId, projectId, state: to })}
            className="rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-50 disabled:opacity-50"
          >
            {label}
          </button>
        ))}
      {set.isError && <span className="text-xs text-red-700">{set.error.message}</span>}
    </div>
  );
}

function QueueEntries({
  tenantId,
  projectId,
  canControl,
}: {
  tenantId: string;
  projectId: string;
  canControl: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const q = useQuery(trpc.landing.queue.queryOptions({ tenantId, projectId }, { refetchInterval: LANDING_REFETCH_MS }));
  const front = useMutation(
    trpc.landing.setPriority.mutationOptions({
      onSettled: () =>
        queryClient.invalidateQueries({ queryKey: trpc.landing.queue.queryKey({ tenantId, projectId }) }),
    }),
  );
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
        <QueueEntry
          key={e.changeId}
          entry={e}
          projectId={projectId}
          onFront={
            canControl && e.position > 1
              ? {
                  pending: front.isPending,
                  go: () => front.mutate({ tenantId, changeId: e.changeId, priority: "front" }),
                }
              : null
          }
        />
      ))}
      {front.isError && (
        <li role="alert" className="py-1 text-xs text-red-700">
          {front.error.message}
        </li>
      )}
    </ol>
  );
}

interface Entry {
  changeId: string;
  position: number;
  title: string;
  ready: boolean;
  waitingFor: string;
  detail: string;
  priority: number;
  since: string | Date;
  stackedOn: { candidateId: string; changeId: string; title: string } | null;
}

/**
 * One Change of the queue. A Change of the speculative stack says which one it is built on: its
 * Candidate is composed and verified on that one's composed tree, and lands right after it.
 */
function QueueEntry({
  entry: e,
  projectId,
  onFront,
}: {
  entry: Entry;
  projectId: string;
  onFront: { pending: boolean; go: () => void } | null;
}) {
  return (
    <li
      data-testid="landing-entry"
      data-change-id={e.changeId}
      data-waiting-for={e.waitingFor}
      className="flex flex-wrap items-baseline gap-3 py-1.5"
    >
      <span className="w-6 text-right font-mono text-slate-500">{e.position}</span>
      <a href={`/projects/${projectId}/changes/${e.changeId}`} className="font-medium text-sky-800 underline">
        {e.title}
      </a>
      <span className={`rounded px-1.5 py-0.5 text-xs ${WAIT_CLASSES[e.waitingFor] ?? "bg-slate-100 text-slate-700"}`}>
        {waitLabel(e)}
      </span>
      {e.stackedOn && (
        <span data-testid="landing-stacked-on" data-stacked-on={e.stackedOn.changeId} className="text-xs text-sky-900">
          ↳ stacked on{" "}
          <a href={`/projects/${projectId}/changes/${e.stackedOn.changeId}`} className="underline">
            {e.stackedOn.title}
          </a>
        </span>
      )}
      <span className="text-xs text-slate-600">{e.detail}</span>
      {e.priority > 0 && (
        <span data-testid="landing-priority" className="text-xs text-slate-600">
          priority {e.priority}
        </span>
      )}
      <time dateTime={new Date(e.since).toISOString()} className="ml-auto text-xs text-slate-400">
        since {new Date(e.since).toLocaleTimeString()}
      </time>
      {onFront && (
        <button
          type="button"
          data-testid="landing-front"
          disabled={onFront.pending}
          onClick={onFront.go}
          className="rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-50 disabled:opacity-50"
        >
          Move to front
        </button>
      )}
    </li>
  );
}
