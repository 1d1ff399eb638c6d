"use client";

import { type Culprit, changeLabel, completedTasksRerunnable, culpritText } from "@rhumbatron/core";
import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { useTRPC } from "../../trpc/client.tsx";
import { Notice } from "../notice.tsx";
import { Empty, LoadError, Loading, Panel } from "../query-state.tsx";
import { AgentRuns } from "./agent-runs.tsx";
import { AttemptsPanel } from "./attempts-panel.tsx";
import { ChangeActions } from "./change-actions.tsx";
import { ChangeHeader } from "./change-header.tsx";
import { ChangeSets } from "./change-sets.tsx";
import { WorkGraph } from "./work-graph.tsx";

/** How often an unfinished Change's page refreshes its Tasks, runs, ChangeSets and Candidates. */
export const CHANGE_REFETCH_MS = 2_000;

/** A Change is finished for this page once it is cancelled or one of its Candidates was promoted. */
function isSettled(status: string | undefined, candidates: { status: string }[] | undefined): boolean {
  return status === "cancelled" || (candidates ?? []).some((c) => c.status === "promoted");
}

/**
 * The Change and its Candidates, each asked again every CHANGE_REFETCH_MS until the Change settles,
 * with each Task's key and why its newest run is blocked, by Task ID.
 */
function useChange(tenantId: string, changeId: string) {
  const trpc = useTRPC();
  const candidates = useQuery(
    trpc.change.candidates.queryOptions(
      { tenantId, changeId },
      { refetchInterval: (q) => (isSettled(undefined, q.state.data) ? false : CHANGE_REFETCH_MS) },
    ),
  );
  const change = useQuery(
    trpc.change.get.queryOptions(
      { tenantId, changeId },
      {
        refetchInterval: (q) => (isSettled(q.state.data?.status, candidates.data) ? false : CHANGE_REFETCH_MS),
        retry: (n, err) => err.data?.code !== "NOT_FOUND" && err.data?.code !== "FORBIDDEN" && n < 2,
      },
    ),
  );
  const taskKeys = useMemo(() => new Map((change.data?.tasks ?? []).map((t) => [t.id, t.key])), [change.data]);
  const blockedReasons = useMemo(() => {
    // Runs come oldest first: the last one of a Task is its newest; only a blocked newest run speaks for it.
    const newest = new Map<string, { status: string; error: string | null }>();
    for (const r of change.data?.runs ?? []) newest.set(r.taskId, r);
    return new Map(
      [...newest].flatMap(([taskId, r]) => (r.status === "blocked" && r.error ? [[taskId, r.error] as const] : [])),
    );
  }, [change.data]);
  return { candidates, change, taskKeys, blockedReasons };
}

/**
 * A Change: its Work Graph coloured by Task state, the Agents and their runs, the ChangeSets with
 * their patches, and the Candidates composed from it. Refreshes itself until the Change settles.
 */
export function ChangeView({
  tenantId,
  projectId,
  changeId,
}: {
  tenantId: string;
  projectId: string;
  changeId: string;
}) {
  const { candidates, change, taskKeys, blockedReasons } = useChange(tenantId, changeId);

  if (change.isPending) return <Loading testId="change-view" label="Loading the Change…" />;
  if (change.isError) {
    if (change.error.data?.code === "NOT_FOUND") {
      return <ChangeNotFound changeId={changeId} projectId={projectId} />;
    }
    return (
      <LoadError
        testId="change-view"
        what="the Change"
        message={change.error.message}
        onRetry={() => void change.refetch()}
      />
    );
  }
  const c = change.data;
  if (c.projectId !== projectId) {
    // The URL names another project of this tenant: send the reader to the Change's own project.
    return <ChangeMoved projectId={c.projectId} changeId={c.id} />;
  }
  const live = isSettled(c.status, candidates.data) ? false : CHANGE_REFETCH_MS;
  const first = candidates.data?.[0];
  const newest = first ? { status: first.status, rejectionReason: first.rejectionReason ?? null } : null;
  const label = changeLabel(c.status, newest);

  return (
    <div data-testid="change-view" data-state="ready" data-status={c.status} className="space-y-6">
      <ChangeHeader change={c} projectId={projectId} label={label} />

      <CulpritNotice
        culprit={(first?.culprit ?? null) as Culprit | null}
        href={first ? `/projects/${projectId}/candidates/${first.id}` : null}
      />

      <ChangeActions
        tenantId={tenantId}
        change={c}
        rerunnable={completedTasksRerunnable({ changeStatus: c.status, newestCandidate: newest })}
      />

      <Panel title="Work Graph" testId="work-graph-panel">
        <WorkGraph tasks={c.tasks} blockedReasons={blockedReasons} />
      </Panel>

      <AttemptsPanel tenantId={tenantId} projectId={projectId} changeId={c.id} live={live !== false} />

      <Panel title="Candidates" testId="change-candidates-panel">
        <ChangeCandidates projectId={projectId} query={candidates} />
      </Panel>

      <Panel title="Agents and their runs" testId="agents-panel">
        <AgentRuns tenantId={tenantId} runs={c.runs} taskKeys={taskKeys} />
      </Panel>

      <Panel title="ChangeSets" testId="changesets-panel">
        <ChangeSets tenantId={tenantId} changeId={c.id} live={live} />
      </Panel>
    </div>
  );
}

/**
 * The Task whose ChangeSet first broke the newest Candidate's failing check, found by composing
 * prefixes of its ChangeSets (docs/flaky-tests.md): retrying that Task gives its Agent the failure.
 */
export function CulpritNotice({ culprit, href }: { culprit: Culprit | null; href: string | null }) {
  if (!culprit) return null;
  return (
    <div data-testid="change-culprit" data-task-key={culprit.task?.key ?? ""}>
      <Notice
        title={culprit.task ? `Task ${culprit.task.key} broke ${culprit.checkId}` : "No Task broke it"}
        tone="error"
      >
        {culpritText(culprit).replace(/^culprit: /, "")}.{" "}
        {href && (
          <a className="underline" href={href}>
            Each probe's Evidence
          </a>
        )}
      </Notice>
    </div>
  );
}

/** There is no such Change in this tenant: said so, with the way back to the project. */
function ChangeNotFound({ changeId, projectId }: { changeId: string; projectId: string }) {
  return (
    <div data-testid="change-view" data-state="not-found">
      <Notice title="Change not found" tone="error">
        There is no Change {changeId} in this tenant.{" "}
        <a className="underline" href={`/projects/${projectId}`}>
          Back to the project
        </a>
      </Notice>
    </div>
  );
}

/** The Change belongs to another project of this tenant: a link to it there. */
function ChangeMoved({ projectId, changeId }: { projectId: string; changeId: string }) {
  return (
    <div data-testid="change-view" data-state="moved">
      <Notice title="Wrong project">
        This Change belongs to another project.{" "}
        <a className="underline" href={`/projects/${projectId}/changes/${changeId}`}>
          Open it there
        </a>
      </Notice>
    </div>
  );
}

type CandidatesQuery = {
  isPending: boolean;
  isError: boolean;
  error: { message: string } | null;
  data?: {
    id: string;
    status: string;
    baseGeneration: number;
    promotedGeneration: number | null;
    recomposeReason: string | null;
    createdAt: Date;
  }[];
  refetch: () => unknown;
};

function ChangeCandidates({ projectId, query }: { projectId: string; query: CandidatesQuery }) {
  if (query.isPending) return <Loading testId="change-candidates" label="Loading Candidates…" />;
  if (query.isError || !query.data) {
    return (
      <LoadError
        testId="change-candidates"
        what="Candidates"
        message={query.error?.message ?? "unknown error"}
        onRetry={() => void query.refetch()}
      />
    );
  }
  if (query.data.length === 0) {
    return <Empty testId="change-candidates">No Candidate yet: one is composed when every Task has completed.</Empty>;
  }
  return (
    <ul data-testid="change-candidates" data-state="ready" className="divide-y divide-slate-100 text-sm">
      {query.data.map((cand) => (
        <li key={cand.id} className="flex flex-wrap items-baseline gap-3 py-1.5">
          <a
            href={`/projects/${projectId}/candidates/${cand.id}`}
            data-testid={`candidate-link-${cand.id}`}
            className="font-mono text-sky-800 underline"
          >
            {cand.id}
          </a>
          <span
            data-testid="candidate-status"
            data-status={cand.status}
            className="rounded bg-slate-100 px-1.5 py-0.5 text-xs"
          >
            {cand.status}
          </span>
          <span className="text-xs text-slate-500">
            on S{cand.baseGeneration}
            {cand.promotedGeneration !== null && <> · promoted as S{cand.promotedGeneration}</>}
          </span>
          <time dateTime={cand.createdAt.toISOString()} className="ml-auto text-xs text-slate-400">
            {cand.createdAt.toLocaleString()}
          </time>
          {cand.recomposeReason && (
            <p data-testid="candidate-recomposed" className="basis-full text-xs text-slate-600">
              {cand.recomposeReason[0]?.toUpperCase()}
              {cand.recomposeReason.slice(1)}
            </p>
          )}
          {cand.status === "stale" && cand === query.data?.[0] && (
            <p data-testid="candidate-stale-note" className="basis-full text-xs text-amber-800">
              Canonical moved past this Candidate's base: a new one is being composed on the current generation.
            </p>
          )}
        </li>
      ))}
    </ul>
  );
}
