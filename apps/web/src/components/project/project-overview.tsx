"use client";

import type { Role } from "@rhumbatron/db";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useRef } from "react";
import { useTRPC } from "../../trpc/client.tsx";
import { Notice } from "../notice.tsx";
import { LoadError, Loading } from "../query-state.tsx";
import { ProjectHeader, ProjectNotices, SettingsPanels, WorkPanels } from "./project-overview-sections.tsx";

/** At most one refresh of the counts and lists per this many ms, however busy the feed is. */
const REFRESH_AFTER_EVENT_MS = 1_000;

/**
 * A project's overview: the generation timeline, the view's counts, clone access, its Changes and
 * Candidates, its releases (and, for admins, where they go), code search with the index status, and
 * the live event feed. Each Event on the feed refreshes the counts, the lists and the releases.
 */
export function ProjectOverview({ tenantId, projectId, role }: { tenantId: string; projectId: string; role: Role }) {
  const { overview, refreshAfterEvent } = useProjectOverview(tenantId, projectId);
  if (overview.isPending) return <Loading testId="project-overview" label="Loading the project…" />;
  if (overview.isError) {
    if (overview.error.data?.code === "NOT_FOUND") {
      return (
        <div data-testid="project-overview" data-state="not-found">
          <Notice title="Project not found" tone="error">
            There is no project {projectId} in this tenant.{" "}
            <a className="underline" href="/">
              Back to projects
            </a>
          </Notice>
        </div>
      );
    }
    return (
      <LoadError
        testId="project-overview"
        what="the project"
        message={overview.error.message}
        onRetry={() => void overview.refetch()}
      />
    );
  }
  const { project, generations, view } = overview.data;
  return (
    <div data-testid="project-overview" data-state="ready" data-status={project.status} className="space-y-6">
      <ProjectHeader project={project} />
      <ProjectNotices tenantId={tenantId} project={project} role={role} />
      <WorkPanels tenantId={tenantId} project={project} generations={generations} view={view} role={role} />
      <SettingsPanels tenantId={tenantId} project={project} role={role} refreshAfterEvent={refreshAfterEvent} />
    </div>
  );
}

/** The project's overview, refreshed while it is being made, and a refresh of it and its lists after each Event. */
function useProjectOverview(tenantId: string, projectId: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const overview = useQuery(
    trpc.projects.overview.queryOptions(
      { tenantId, projectId },
      {
        // A provisioning project becomes active without an Event on its feed until S0 exists.
        // A waiting project turns provisioning when its push arrives, also without an Event.
        refetchInterval: (q) =>
          ["provisioning", "awaiting_push"].includes(q.state.data?.project.status ?? "") ? 2_000 : false,
        retry: (n, err) => err.data?.code !== "NOT_FOUND" && err.data?.code !== "FORBIDDEN" && n < 2,
      },
    ),
  );
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  const refreshAfterEvent = useCallback(() => {
    if (pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = null;
      void queryClient.invalidateQueries({ queryKey: trpc.projects.overview.queryKey({ tenantId, projectId }) });
      void queryClient.invalidateQueries(trpc.change.list.pathFilter());
      // A promotion (canonical.advanced) starts a release and an index build; release.* Events follow.
      void queryClient.invalidateQueries(trpc.projects.releases.pathFilter());
      void queryClient.invalidateQueries(trpc.projects.indexes.pathFilter());
      // A promotion may change the checks file; a verification adds setup runs.
      void queryClient.invalidateQueries(trpc.projects.checks.pathFilter());
      // policy.updated: another admin edited the policy.
      void queryClient.invalidateQueries(trpc.policy.get.pathFilter());
    }, REFRESH_AFTER_EVENT_MS);
  }, [queryClient, trpc, tenantId, projectId]);
  return { overview, refreshAfterEvent };
}
