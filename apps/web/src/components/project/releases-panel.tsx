"use client";

import type { ReleaseEntry, ReleaseStep } from "@rhumbatron/db";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";
import { Empty, NotReady } from "../query-state.tsx";
import { describeReleaseTarget } from "./release-target.ts";
import { ReleaseTargetForm } from "./release-target-form.tsx";

/** How often the releases refresh while one of them is running. */
export const RELEASES_REFETCH_MS = 3_000;

const STATUS_CLASSES: Record<ReleaseEntry["status"], string> = {
  running: "bg-amber-100 text-amber-900",
  succeeded: "bg-emerald-100 text-emerald-800",
  failed: "bg-red-100 text-red-800",
};

/**
 * The project's releases (one per promoted generation with a target), newest first, each with its
 * status, the steps of its ReleaseWorkflow and its error; and where future promotions release to,
 * with the form to change it for admins. Refreshes itself while a release is running.
 */
export function ReleasesPanel({
  tenantId,
  projectId,
  canManage,
}: {
  tenantId: string;
  projectId: string;
  canManage: boolean;
}) {
  const trpc = useTRPC();
  const q = useQuery(
    trpc.projects.releases.queryOptions(
      { tenantId, projectId },
      {
        refetchInterval: (query) =>
          query.state.data?.releases.some((r) => r.status === "running") ? RELEASES_REFETCH_MS : false,
      },
    ),
  );
  if (!q.isSuccess) return <NotReady query={q} testId="releases" what="the releases" label="Loading the releases…" />;
  const { target, releases } = q.data;
  return (
    <div className="space-y-4">
      {canManage ? (
        <ReleaseTargetForm tenantId={tenantId} projectId={projectId} current={target} />
      ) : (
        <p data-testid="release-target-current" data-kind={target?.kind ?? ""} className="text-sm text-slate-600">
          Future promotions release to <span className="font-mono text-xs">{describeReleaseTarget(target)}</span>.
        </p>
      )}
      {releases.length === 0 ? (
        <Empty testId="releases">
          No releases yet: each promotion (S1 onwards) starts one, unless the target is none.
        </Empty>
      ) : (
        <ol data-testid="releases" data-state="ready" className="divide-y divide-slate-100">
          {releases.map((r) => (
            <ReleaseRow key={r.id} release={r} />
          ))}
        </ol>
      )}
    </div>
  );
}

function ReleaseRow({ release: r }: { release: ReleaseEntry }) {
  return (
    <li data-testid="release-row" data-status={r.status} data-release-id={r.id} className="space-y-1.5 py-2 text-sm">
      <div className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
        <span className="w-10 font-mono font-semibold">S{r.generation}</span>
        <span data-testid="release-status" className={`rounded px-1.5 py-0.5 text-xs ${STATUS_CLASSES[r.status]}`}>
          {r.status}
        </span>
        <code title={r.commit} className="font-mono text-xs text-slate-500">
          {r.commit.slice(0, 10)}
        </code>
        <span className="text-xs text-slate-600">to {describeReleaseTarget(r.target)}</span>
        <span className="ml-auto text-xs text-slate-500" title={r.id}>
          {r.createdAt.toLocaleString()}
        </span>
      </div>
      {delivered(r.output) && (
        <p data-testid="release-delivered" className="font-mono text-xs text-slate-600">
          {delivered(r.output)}
        </p>
      )}
      {r.error && (
        <p
          data-testid="release-error"
          role={r.status === "failed" ? "alert" : undefined}
          className={`whitespace-pre-wrap rounded px-2 py-1 text-xs ${
            r.status === "failed" ? "bg-red-50 text-red-800" : "bg-amber-50 text-amber-900"
          }`}
        >
          {r.status === "running" ? "Last attempt failed, retrying: " : ""}
          {r.error}
        </p>
      )}
      {r.steps.length > 0 && (
        <ol data-testid="release-steps" className="flex flex-wrap gap-1">
          {r.steps.map((s) => (
            <StepChip key={`${s.step}-${s.status}-${s.attempt ?? ""}`} step={s} />
          ))}
        </ol>
      )}
    </li>
  );
}

/** Where a succeeded release went, from its output ({delivered: {kind, path | url, files, …}}). */
function delivered(output: unknown): string | null {
  const d = (output as { delivered?: { kind?: string; path?: string; url?: string; files?: number } } | null)
    ?.delivered;
  if (!d) return null;
  if (d.kind === "folder" && d.path) return `delivered ${d.files ?? 0} files to ${d.path}`;
  if (d.kind === "webhook" && d.url) return `delivered ${d.files ?? 0} files to ${d.url}`;
  return null;
}

function StepChip({ step: s }: { step: ReleaseStep }) {
  const failed = s.status === "failed";
  const title = [`${s.startedAt} → ${s.finishedAt}`, s.error].filter(Boolean).join("\n");
  return (
    <li
      data-testid="release-step"
      data-step={s.step}
      data-status={s.status}
      title={title}
      className={`rounded px-1.5 py-0.5 font-mono text-xs ${failed ? "bg-red-50 text-red-800" : "bg-slate-100 text-slate-700"}`}
    >
      {s.step}
      {s.attempt !== undefined ? ` #${s.attempt}` : ""} {failed ? "✗" : "✓"}
    </li>
  );
}
