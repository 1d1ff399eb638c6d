"use client";

import type { AppRouter } from "@rhumbatron/api";
import { hasAtLeast } from "@rhumbatron/api/roles";
import { describeAgentChoice } from "@rhumbatron/core";
import type { ProjectViewCounts, Role } from "@rhumbatron/db";
import type { inferRouterOutputs } from "@trpc/server";
import { Notice } from "../notice.tsx";
import { Panel } from "../query-state.tsx";
import { AgentChoiceForm } from "./agent-choice-form.tsx";
import { ChangeList } from "./change-list.tsx";
import { CloneAccess } from "./clone-access.tsx";
import { CodeSearch } from "./code-search.tsx";
import { EventFeed } from "./event-feed.tsx";
import { FlakyTests } from "./flaky-tests.tsx";
import { GenerationTimeline } from "./generation-timeline.tsx";
import { IndexStatus } from "./index-status.tsx";
import { LandingQueue } from "./landing-queue.tsx";
import { PolicySummary } from "./policy-summary.tsx";
import { ProjectChecks } from "./project-checks.tsx";
import { PushWaiting } from "./push-waiting.tsx";
import { ReleasesPanel } from "./releases-panel.tsx";

/** What the overview page (project-overview.tsx) read from the server, and the project in it. */
type Overview = inferRouterOutputs<AppRouter>["projects"]["overview"];
type Project = Overview["project"];

/** The project's name and ID under the way back to the list, with its status and canonical generation. */
export function ProjectHeader({ project }: { project: Project }) {
  return (
    <header className="flex flex-wrap items-end justify-between gap-3">
      <div>
        <p className="text-sm text-slate-500">
          <a href="/" className="underline">
            Projects
          </a>{" "}
          /
        </p>
        <h1 data-testid="project-title" className="text-xl font-semibold">
          {project.name}
        </h1>
        <p className="font-mono text-xs text-slate-500">{project.id}</p>
      </div>
      <div className="flex items-center gap-3 text-sm">
        <span data-testid="project-status" className="rounded-full bg-slate-100 px-2 py-0.5">
          {project.status}
        </span>
        <span data-testid="project-generation" className="font-mono">
          S{project.canonicalGeneration}
        </span>
      </div>
    </header>
  );
}

/**
 * What to know about the project before its panels: why it failed, the push it waits for, where it
 * was imported from, its Agent (and, for admins, the form to change it), whether it is archived.
 */
export function ProjectNotices({ tenantId, project, role }: { tenantId: string; project: Project; role: Role }) {
  return (
    <>
      {project.status === "failed" && (
        <Notice title="Provisioning failed" tone="error">
          <span data-testid="project-failure">
            {project.failureReason ?? "The project's repository could not be made."}
          </span>{" "}
          Nothing was kept: it has no repository and no generation. Import again under another name once the source is
          fixed.
        </Notice>
      )}
      {project.status === "awaiting_push" && (
        <PushWaiting tenantId={tenantId} projectId={project.id} canIssue={hasAtLeast(role, "admin")} />
      )}
      {project.sourceKind === "import" && (
        <p data-testid="project-source" className="text-sm text-slate-600">
          Imported from <span className="font-mono">{project.sourceUrl}</span>
          {project.sourceBranch ? (
            <>
              {" "}
              (branch <span className="font-mono">{project.sourceBranch}</span>)
            </>
          ) : (
            " (its HEAD branch)"
          )}
          {project.sourceSubmodules ? ", with its submodules" : ""}.
        </p>
      )}
      <p data-testid="project-agent" className="text-sm break-words text-slate-600">
        Agent: <span className="font-mono [overflow-wrap:anywhere]">{describeAgentChoice(project.agent)}</span>
        {project.agent === null && " (the model when the worker has AGENT_MODEL_URL, else scripted)"}. A Task may name
        its own in the Work Graph. {hasAtLeast(role, "admin") ? "Change it" : "An admin changes it"} with{" "}
        <code className="font-mono [overflow-wrap:anywhere]">rhumbatron projects agent {project.id}</code>.
      </p>
      {hasAtLeast(role, "admin") && project.status !== "archived" && (
        <details data-testid="agent-choice" className="text-sm">
          <summary className="cursor-pointer text-sky-800 underline">Change the Agent here</summary>
          <AgentChoiceForm tenantId={tenantId} projectId={project.id} current={project.agent} />
        </details>
      )}
      {project.status === "archived" && (
        <Notice title="Archived">
          This project is archived: it takes no new Changes, and its repositories have been removed. Its history stays
          readable.
        </Notice>
      )}
    </>
  );
}

/** The generations, the counts, clone access, the Changes, the landing queue and the Candidates. */
export function WorkPanels({
  tenantId,
  project,
  generations,
  view,
  role,
}: {
  tenantId: string;
  project: Project;
  generations: Overview["generations"];
  view: ProjectViewCounts | null;
  role: Role;
}) {
  return (
    <>
      <Panel title="Canonical generations" testId="generations-panel">
        <GenerationTimeline projectId={project.id} generations={generations} current={project.canonicalGeneration} />
      </Panel>

      <div className="grid gap-6 md:grid-cols-2">
        <Panel title="At a glance" testId="project-counts">
          <Counts view={view} />
        </Panel>
        <Panel title="Clone the source" testId="clone-panel">
          <CloneAccess tenantId={tenantId} projectId={project.id} active={project.status === "active"} />
        </Panel>
      </div>

      <Panel
        title="Changes"
        testId="changes-panel"
        actions={
          project.status === "active" && (
            <a
              href={`/projects/${project.id}/changes/new`}
              data-testid="new-change-link"
              className="rounded bg-slate-900 px-3 py-1 text-sm font-medium text-white hover:bg-slate-700"
            >
              New Change
            </a>
          )
        }
      >
        <ChangeList tenantId={tenantId} projectId={project.id} />
      </Panel>

      <Panel title="Landing queue" testId="landing-queue-panel">
        <LandingQueue tenantId={tenantId} projectId={project.id} canControl={hasAtLeast(role, "admin")} />
      </Panel>

      <Panel
        title="Candidates"
        testId="candidates-panel"
        actions={
          <a href={`/projects/${project.id}/candidates`} data-testid="candidates-link" className="text-sm underline">
            All Candidates
          </a>
        }
      >
        <CountChips testId="candidate-counts" counts={view?.candidatesByState ?? {}} empty="No Candidates yet." />
      </Panel>
    </>
  );
}

/** The policy, the checks, the releases, the webhooks (admins), code search and the live event feed. */
export function SettingsPanels({
  tenantId,
  project,
  role,
  refreshAfterEvent,
}: {
  tenantId: string;
  project: Project;
  role: Role;
  refreshAfterEvent: () => void;
}) {
  return (
    <>
      <Panel
        title="Verification policy"
        testId="policy-panel"
        actions={
          <a href={`/projects/${project.id}/policy`} data-testid="policy-link" className="text-sm underline">
            {hasAtLeast(role, "admin") ? "View and edit" : "View"}
          </a>
        }
      >
        <PolicySummary tenantId={tenantId} projectId={project.id} />
      </Panel>

      <Panel title="Checks" testId="checks-panel">
        <ProjectChecks tenantId={tenantId} projectId={project.id} />
      </Panel>

      <Panel title="Flaky and broken tests" testId="tests-panel">
        <FlakyTests tenantId={tenantId} projectId={project.id} canQuarantine={hasAtLeast(role, "admin")} />
      </Panel>

      <Panel title="Releases" testId="releases-panel">
        <ReleasesPanel tenantId={tenantId} projectId={project.id} canManage={hasAtLeast(role, "admin")} />
      </Panel>

      {hasAtLeast(role, "admin") && (
        <Panel
          title="Webhooks"
          testId="webhooks-panel"
          actions={
            <a href={`/projects/${project.id}/webhooks`} data-testid="webhooks-link" className="text-sm underline">
              Manage webhooks
            </a>
          }
        >
          <p className="text-sm text-slate-600">
            Send this project's Events to your own URLs, signed, with a delivery log and Redeliver.
          </p>
        </Panel>
      )}

      <Panel title="Search the code" testId="code-search-panel">
        <div className="space-y-3">
          <IndexStatus
            tenantId={tenantId}
            projectId={project.id}
            canonicalGeneration={project.canonicalGeneration}
            active={project.status === "active"}
          />
          <CodeSearch tenantId={tenantId} projectId={project.id} />
        </div>
      </Panel>

      <Panel title="Live events" testId="events-panel">
        <EventFeed tenantId={tenantId} projectId={project.id} onEvent={refreshAfterEvent} />
      </Panel>
    </>
  );
}

function Counts({ view }: { view: ProjectViewCounts | null }) {
  if (!view) {
    return (
      <p data-testid="view-counts" data-state="empty" className="text-sm text-slate-500">
        Nothing counted yet: the project view fills in as Events are projected.
      </p>
    );
  }
  return (
    <dl data-testid="view-counts" data-state="ready" className="space-y-2 text-sm">
      <div className="flex justify-between gap-3">
        <dt className="text-slate-500">Changes</dt>
        <dd data-testid="count-changes" className="font-mono">
          {view.changesTotal}
        </dd>
      </div>
      <div>
        <dt className="text-slate-500">Changes by state</dt>
        <dd>
          <CountChips testId="change-counts" counts={view.changesByState} empty="none" />
        </dd>
      </div>
      <div>
        <dt className="text-slate-500">Tasks by state</dt>
        <dd>
          <CountChips testId="task-counts" counts={view.tasksByState} empty="none" />
        </dd>
      </div>
      <div className="flex justify-between gap-3">
        <dt className="text-slate-500">Events projected</dt>
        <dd data-testid="count-events" className="font-mono">
          {view.eventCount}
        </dd>
      </div>
      {view.lastEventAt && (
        <div className="flex justify-between gap-3">
          <dt className="text-slate-500">Last event</dt>
          <dd className="text-right text-xs">
            <span className="font-mono">{view.lastEventType}</span> · {view.lastEventAt.toLocaleString()}
          </dd>
        </div>
      )}
    </dl>
  );
}

function CountChips({ counts, testId, empty }: { counts: Record<string, number>; testId: string; empty: string }) {
  const entries = Object.entries(counts).filter(([, n]) => n > 0);
  if (entries.length === 0)
    return (
      <span data-testid={testId} className="text-sm text-slate-500">
        {empty}
      </span>
    );
  return (
    <span data-testid={testId} className="flex flex-wrap gap-1">
      {entries.map(([state, n]) => (
        <span
          key={state}
          data-testid={`${testId}-${state}`}
          data-count={n}
          className="rounded bg-slate-100 px-1.5 py-0.5 text-xs text-slate-700"
        >
          {n} {state}
        </span>
      ))}
    </span>
  );
}
