"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc/client.tsx";

/**
 * The tenant's projects, fetched in the browser through tRPC (browser -> tRPC -> Prisma -> Postgres).
 * The `project-list` container is always present; `data-state` says which state it shows.
 */
export function ProjectList({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const projects = useQuery(trpc.projects.list.queryOptions({ tenantId }));

  if (projects.isPending) {
    return (
      <div data-testid="project-list" data-state="loading" aria-busy="true" className="text-sm text-slate-500">
        Loading projects…
      </div>
    );
  }
  if (projects.isError) {
    return (
      <div
        data-testid="project-list"
        data-state="error"
        role="alert"
        className="rounded-lg border border-red-200 bg-red-50 p-4 text-sm text-red-900"
      >
        <p>Could not load projects: {projects.error.message}</p>
        <button
          type="button"
          onClick={() => void projects.refetch()}
          className="mt-2 rounded border border-red-300 bg-white px-2 py-1 text-red-800 hover:bg-red-100"
        >
          Try again
        </button>
      </div>
    );
  }
  if (projects.data.length === 0) {
    return (
      <div
        data-testid="project-list"
        data-state="empty"
        className="rounded-lg border border-dashed border-slate-300 p-8 text-center text-slate-500"
      >
        No projects yet
      </div>
    );
  }
  return (
    <ul
      data-testid="project-list"
      data-state="ready"
      className="divide-y divide-slate-200 rounded-lg border border-slate-200 bg-white"
    >
      {projects.data.map((p) => (
        <li key={p.id} data-testid="project-row" className="flex items-center justify-between gap-4 px-4 py-3">
          <div className="min-w-0">
            <div data-testid="project-name" className="font-medium">
              {p.name}
            </div>
            <div data-testid="project-id" className="truncate font-mono text-xs text-slate-500">
              {p.id}
            </div>
          </div>
          <div className="flex shrink-0 items-center gap-3 text-sm">
            <span data-testid="project-status" className="rounded-full bg-slate-100 px-2 py-0.5 text-slate-700">
              {p.status}
            </span>
            <span data-testid="project-generation" className="font-mono text-slate-600" title="canonical generation">
              S{p.canonicalGeneration}
            </span>
          </div>
        </li>
      ))}
    </ul>
  );
}
