"use client";

import { useQuery } from "@tanstack/react-query";
import { candidateTone, isFinalStatus, LIVE_REFETCH_MS } from "../../lib/candidate-view.ts";
import { useTRPC } from "../../trpc/client.tsx";
import { Empty, LoadError, Loading } from "../query-state.tsx";
import { Badge, Hash } from "./badges.tsx";

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
  return (
    <ul
      data-testid="candidate-list"
      data-state="ready"
      className="divide-y divide-slate-200 rounded-lg border border-slate-200 bg-white"
    >
      {list.data.map((c) => (
        <li
          key={c.id}
          data-testid="candidate-row"
          className="flex flex-wrap items-center justify-between gap-3 px-4 py-3"
        >
          <div className="min-w-0">
            <a
              className="font-mono text-sm font-medium text-sky-800 underline"
              href={`/projects/${projectId}/candidates/${c.id}`}
            >
              {c.id}
            </a>
            <div className="text-xs text-slate-500">
              Change <span className="font-mono">{c.changeId}</span> · {c.changeSetIds.length} ChangeSets · on S
              {c.baseGeneration} · tree <Hash value={c.composedTree} /> · {c.createdAt.toLocaleString()}
            </div>
          </div>
          <Badge tone={candidateTone(c.status)}>
            <span data-testid="candidate-row-status" data-status={c.status}>
              {c.status}
            </span>
          </Badge>
        </li>
      ))}
    </ul>
  );
}
