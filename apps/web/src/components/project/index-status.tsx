"use client";

import type { ProjectIndexEntry } from "@rhumbatron/db";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";
import { NotReady } from "../query-state.tsx";

/** How often the status refreshes while the current generation's index is still to be built. */
export const INDEX_REFETCH_MS = 3_000;

const STATUS_CLASSES: Record<ProjectIndexEntry["status"], string> = {
  built: "text-emerald-800",
  failed: "text-red-800",
  purged: "text-slate-600",
};

/**
 * The latest state of the project's search index (project_indexes): built for which generation,
 * failed with its error (red), or purged on archive. While the canonical generation has no row
 * yet, index.build is still on the indexing queue: the status says so and refreshes itself.
 */
export function IndexStatus({
  tenantId,
  projectId,
  canonicalGeneration,
  active,
}: {
  tenantId: string;
  projectId: string;
  canonicalGeneration: number;
  /** Only an active project has index builds to wait for. */
  active: boolean;
}) {
  const trpc = useTRPC();
  const pendingFor = (rows: ProjectIndexEntry[] | undefined) =>
    active && canonicalGeneration > 0 && !rows?.some((r) => r.generation >= canonicalGeneration);
  const q = useQuery(
    trpc.projects.indexes.queryOptions(
      { tenantId, projectId },
      { refetchInterval: (query) => (pendingFor(query.state.data) ? INDEX_REFETCH_MS : false) },
    ),
  );
  if (!q.isSuccess)
    return (
      <NotReady
        query={q}
        testId="index-status"
        what="the search index status"
        label="Loading the search index status…"
      />
    );
  const latest = q.data[0];
  const pending = pendingFor(q.data);
  if (!latest) {
    return (
      <p data-testid="index-status" data-state={pending ? "pending" : "empty"} className="text-sm text-slate-500">
        {pending
          ? `Building the search index of S${canonicalGeneration}…`
          : "No search index yet: it is built after each promotion."}
      </p>
    );
  }
  const lastBuilt = q.data.find((r) => r.status === "built");
  return (
    <div
      data-testid="index-status"
      data-state="ready"
      data-status={latest.status}
      data-generation={latest.generation}
      className="space-y-1 text-sm"
    >
      <p className={STATUS_CLASSES[latest.status]}>
        {latest.status === "built" && `Search index of S${latest.generation}: ${latest.files} files indexed.`}
        {latest.status === "failed" && `The search index of S${latest.generation} could not be built.`}
        {latest.status === "purged" && "The search index was removed when the project was archived."}{" "}
        <span className="text-xs text-slate-500">{latest.updatedAt.toLocaleString()}</span>
      </p>
      {latest.status === "failed" && (
        <p
          role="alert"
          data-testid="index-error"
          className="whitespace-pre-wrap rounded bg-red-50 px-2 py-1 font-mono text-xs text-red-800"
        >
          {latest.error ?? "no error recorded"}
        </p>
      )}
      {latest.status === "failed" && lastBuilt && (
        <p className="text-xs text-slate-500">Search answers from S{lastBuilt.generation}, the last index built.</p>
      )}
      {pending && <p className="text-xs text-amber-900">Building the search index of S{canonicalGeneration}…</p>}
    </div>
  );
}
