"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc/client.tsx";

/** How often the list refreshes while a project is still being provisioned by the worker. */
export const PROVISIONING_REFETCH_MS = 2_000;

const STATUS_CLASSES: Record<string, string> = {
  provisioning: "bg-amber-100 text-amber-900",
  active: "bg-emerald-100 text-emerald-800",
  archived: "bg-slate-200 text-slate-600",
  failed: "bg-red-100 text-red-800",
};

/**
 * The tenant's projects, fetched in the browser through tRPC (browser -> tRPC -> Prisma -> Postgres).
 * The `project-list` container is always present; `data-state` says which state it shows. While a
 * project is provisioning the list refreshes itself, so its status turns active without a reload.
 */
export function ProjectList({ tenantId, canManage = false }: { tenantId: string; canManage?: boolean }) {
  const projects = useProjects(tenantId);

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
        No projects yet{canManage ? ": create the first one above." : "."}
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
        <ProjectRow key={p.id} p={p} tenantId={tenantId} canManage={canManage} />
      ))}
    </ul>
  );
}

type Project = NonNullable<ReturnType<typeof useProjects>["data"]>[number];

/** The tenant's projects, refreshed while one of them is still being provisioned or awaits its push. */
function useProjects(tenantId: string) {
  const trpc = useTRPC();
  return useQuery(
    trpc.projects.list.queryOptions(
      { tenantId },
      {
        refetchInterval: (q) =>
          q.state.data?.some((p) => p.status === "provisioning" || p.status === "awaiting_push")
            ? PROVISIONING_REFETCH_MS
            : false,
      },
    ),
  );
}

/** One project: its link, ID, failure reason if any, status, canonical generation and archive button. */
function ProjectRow({ p, tenantId, canManage }: { p: Project; tenantId: string; canManage: boolean }) {
  return (
    <li
      data-testid="project-row"
      data-project-id={p.id}
      data-status={p.status}
      className="flex items-center justify-between gap-4 px-4 py-3"
    >
      <div className="min-w-0">
        <a href={`/projects/${p.id}`} data-testid="project-link" className="font-medium text-sky-800 hover:underline">
          <span data-testid="project-name">{p.name}</span>
        </a>
        <div data-testid="project-id" className="truncate font-mono text-xs text-slate-500">
          {p.id}
        </div>
        {p.status === "failed" && (
          <div data-testid="project-failure" className="text-sm text-red-800">
            {p.failureReason ?? "Provisioning failed."}
          </div>
        )}
      </div>
      <div className="flex shrink-0 items-center gap-3 text-sm">
        <span
          data-testid="project-status"
          className={`rounded-full px-2 py-0.5 ${STATUS_CLASSES[p.status] ?? "bg-slate-100 text-slate-700"}`}
        >
          {p.status}
        </span>
        <span data-testid="project-generation" className="font-mono text-slate-600" title="canonical generation">
          S{p.canonicalGeneration}
        </span>
        {canManage && p.status === "active" && <ArchiveButton tenantId={tenantId} projectId={p.id} name={p.name} />}
      </div>
    </li>
  );
}

/** Archive asks once more before it acts: it deletes the project's repositories. */
function ArchiveButton({ tenantId, projectId, name }: { tenantId: string; projectId: string; name: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const archive = useMutation(
    trpc.projects.archive.mutationOptions({
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.projects.list.queryKey({ tenantId }) }),
    }),
  );
  if (archive.isError) {
    return (
      <span role="alert" data-testid="archive-error" className="text-xs text-red-800">
        {archive.error.message}
      </span>
    );
  }
  if (!confirming) {
    return (
      <button
        type="button"
        data-testid="archive-project"
        onClick={() => setConfirming(true)}
        className="rounded border border-slate-300 px-2 py-0.5 text-xs text-slate-700 hover:bg-slate-100"
      >
        Archive
      </button>
    );
  }
  return (
    <span className="flex items-center gap-2 text-xs">
      <span className="text-slate-600">Archive {name} and delete its repositories?</span>
      <button
        type="button"
        data-testid="confirm-archive"
        disabled={archive.isPending}
        onClick={() => archive.mutate({ tenantId, projectId })}
        className="rounded border border-red-300 bg-red-50 px-2 py-0.5 text-red-800 hover:bg-red-100 disabled:opacity-50"
      >
        {archive.isPending ? "Archiving…" : "Archive"}
      </button>
      <button
        type="button"
        onClick={() => setConfirming(false)}
        className="rounded border border-slate-300 px-2 py-0.5 text-slate-700 hover:bg-slate-100"
      >
        Cancel
      </button>
    </span>
  );
}
