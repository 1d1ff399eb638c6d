"use client";

import { useQuery } from "@tanstack/react-query";
import { ageLabel, candidateTone, isFinalStatus, LIVE_REFETCH_MS } from "../../lib/candidate-view.ts";
import { useTRPC } from "../../trpc/client.tsx";
import { Empty, LoadError, Loading } from "../query-state.tsx";
import { Badge, Hash } from "./badges.tsx";
import type { CandidateListItem } from "./types.ts";

/** A project's Candidates, newest first; refreshed while any of them is still being verified. */
export function CandidateList({ tenantId, projectId }: { tenantId: string; projectId: string }) {
  const trpc = useTRPC();
  const list = useQuery(
    trpc.candidate.list.queryOptions(
      { tenantId, projectId },
      {
        refetchInterval: (q) => (q.state.data?.some((c) => !isFinalStatus(c.status)) ? LIVE_REFETCH_MS : false),
        retry: (n, err) => err.data?.code !== "NOT_FOUND" && err.data?.code !== "FORBIDDEN" && n < 2,
      },
    ),
  );
  if (list.isPending) return <Loading testId="candidate-list" label="Loading Candidates…" />;
  if (list.isError) {
    const notFound = list.error.data?.code === "NOT_FOUND";
    return (
      <LoadError
        testId="candidate-list"
        what="Candidates"
        message={notFound ? "the project does not exist in this tenant" : list.error.message}
        {...(notFound ? {} : { onRetry: () => void list.refetch() })}
      />
    );
  }
  if (list.data.length === 0) {
    return (
      <Empty testId="candidate-list">No Candidates yet: one is composed when a Change’s Tasks all complete.</Empty>
    );
  }
  const now = new Date();
  return (
    <ul
      data-testid="candidate-list"
      data-state="ready"
      className="divide-y divide-slate-200 rounded-lg border border-slate-200 bg-white"
    >
      {list.data.map((c) => (
        <CandidateRow key={c.id} c={c} projectId={projectId} now={now} />
      ))}
    </ul>
  );
}

/** One Candidate of the list: its Change, base, age, ChangeSets, tree and ID, with its status. */
function CandidateRow({ c, projectId, now }: { c: CandidateListItem; projectId: string; now: Date }) {
  return (
    <li
      data-testid="candidate-row"
      data-candidate-id={c.id}
      className="flex items-start justify-between gap-3 px-4 py-3"
    >
      {/* What a reader looks for first: the Change it is a Candidate of; the ID is the small print. */}
      <div className="min-w-0 flex-1">
        <a
          data-testid="candidate-change"
          className={`font-medium break-words text-sky-800 hover:underline ${c.changeTitle ? "" : "font-mono text-sm"}`}
          href={`/projects/${projectId}/changes/${c.changeId}`}
        >
          {c.changeTitle ?? c.changeId}
        </a>
        <div className="mt-0.5 text-xs text-slate-600">
          <span data-testid="candidate-base">on S{c.baseGeneration}</span> ·{" "}
          <time data-testid="candidate-age" dateTime={c.createdAt.toISOString()} title={c.createdAt.toLocaleString()}>
            {ageLabel(c.createdAt, now)}
          </time>{" "}
          · {c.changeSetIds.length} {c.changeSetIds.length === 1 ? "ChangeSet" : "ChangeSets"} ·{" "}
          <span className="whitespace-nowrap">
            tree <Hash value={c.composedTree} />
          </span>
        </div>
        <a
          data-testid="candidate-id"
          className="mt-0.5 block font-mono text-[11px] break-all text-slate-500 underline"
          href={`/projects/${projectId}/candidates/${c.id}`}
        >
          {c.id}
        </a>
      </div>
      <div className="shrink-0">
        <Badge tone={candidateTone(c.status)}>
          <span data-testid="candidate-row-status" data-status={c.status}>
            {c.status}
          </span>
        </Badge>
      </div>
    </li>
  );
}
