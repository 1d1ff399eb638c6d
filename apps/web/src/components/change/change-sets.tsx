"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../../trpc/client.tsx";
import { PatchDiff } from "../patch-diff.tsx";
import { Empty, NotReady } from "../query-state.tsx";

/** The ChangeSets the Change's Agents published, each with its stored patch rendered as a diff on demand. */
export function ChangeSets({ tenantId, changeId, live }: { tenantId: string; changeId: string; live: number | false }) {
  const trpc = useTRPC();
  const sets = useQuery(trpc.change.changeSets.queryOptions({ tenantId, changeId }, { refetchInterval: live }));
  if (!sets.isSuccess)
    return <NotReady query={sets} testId="changesets" what="ChangeSets" label="Loading ChangeSets…" />;
  if (sets.data.length === 0) {
    return <Empty testId="changesets">No ChangeSets yet: an Agent publishes one when it completes its Task.</Empty>;
  }
  return (
    <ul data-testid="changesets" data-state="ready" className="space-y-3">
      {sets.data.map((cs, i) => (
        <ChangeSetItem key={cs.id} tenantId={tenantId} changeSet={cs} openFirst={i === 0} />
      ))}
    </ul>
  );
}

interface ChangeSetRow {
  id: string;
  taskKey: string | null;
  agentId: string;
  commit: string;
  baseCommit: string;
  paths: string[];
  outsidePaths: string[];
  hasPatch: boolean;
  patchBytes: number;
  patchTruncated: boolean;
  createdAt: Date;
}

function ChangeSetItem({
  tenantId,
  changeSet: cs,
  openFirst,
}: {
  tenantId: string;
  changeSet: ChangeSetRow;
  openFirst: boolean;
}) {
  const [open, setOpen] = useState(openFirst);
  return (
    <li data-testid={`changeset-${cs.id}`} className="rounded border border-slate-200">
      <button
        type="button"
        data-testid="changeset-toggle"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        className="flex w-full flex-wrap items-baseline gap-x-3 gap-y-1 px-3 py-2 text-left text-sm hover:bg-slate-50"
      >
        <span aria-hidden className="text-slate-400">
          {open ? "▾" : "▸"}
        </span>
        <span className="font-mono font-medium">{cs.id}</span>
        {cs.taskKey && <span className="font-mono text-xs">Task {cs.taskKey}</span>}
        <span className="font-mono text-xs text-slate-500">{cs.agentId}</span>
        <span className="font-mono text-xs text-slate-500" title={`${cs.baseCommit} → ${cs.commit}`}>
          {cs.baseCommit.slice(0, 7)} → {cs.commit.slice(0, 7)}
        </span>
        <span className="text-xs text-slate-500">{cs.paths.length} files</span>
        <time dateTime={cs.createdAt.toISOString()} className="ml-auto text-xs text-slate-400">
          {cs.createdAt.toLocaleString()}
        </time>
      </button>
      {cs.outsidePaths.length > 0 && (
        <p
          data-testid="changeset-outside-paths"
          className="border-t border-red-100 bg-red-50 px-3 py-1.5 text-xs break-words text-red-800"
        >
          Edited outside its Task's declared paths:{" "}
          <span className="font-mono [overflow-wrap:anywhere]">{cs.outsidePaths.join(", ")}</span>. The gate counts this
          as a gap unless the Agent is allowed to (allowOutsidePaths); otherwise declare these paths on the Task.
        </p>
      )}
      {open && (
        <div className="border-t border-slate-200 p-3">
          {cs.hasPatch ? (
            <StoredPatch tenantId={tenantId} changeSetId={cs.id} />
          ) : (
            <p data-testid="changeset-patch" data-state="none" className="text-sm text-slate-500">
              This run published no patch. Files: <span className="font-mono">{cs.paths.join(", ") || "none"}</span>
            </p>
          )}
        </div>
      )}
    </li>
  );
}

function StoredPatch({ tenantId, changeSetId }: { tenantId: string; changeSetId: string }) {
  const trpc = useTRPC();
  // A stored patch never changes: read it once.
  const patch = useQuery(
    trpc.change.patch.queryOptions({ tenantId, changeSetId }, { staleTime: Number.POSITIVE_INFINITY }),
  );
  if (!patch.isSuccess)
    return <NotReady query={patch} testId="changeset-patch" what="the patch" label="Loading the patch…" />;
  if (patch.data.text === null) {
    return (
      <p data-testid="changeset-patch" data-state="missing" className="text-sm text-slate-500">
        The stored patch is no longer available.
      </p>
    );
  }
  return (
    <div data-testid="changeset-patch" data-state="ready" className="space-y-2">
      {patch.data.truncated && (
        <p className="text-xs text-amber-800">
          Cut at the stored size limit: the full diff is {patch.data.fullBytes.toLocaleString()} bytes.
        </p>
      )}
      <PatchDiff text={patch.data.text} testId={`patch-diff-${changeSetId}`} />
    </div>
  );
}
