"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";

interface TaskRow {
  id: string;
  key: string;
  state: string;
  blockedLimit: string | null;
  attempt: number;
}

/**
 * What a person can do to a Change while it runs: let it land by itself when ready, and retry a
 * Task that failed or was blocked (or re-run a completed one whose newest Candidate conflicted or was
 * rejected: new ChangeSets make a new Candidate on the current generation). Only the
 * actions possible in the current state are offered; the API refuses the others with the reason.
 */
export function ChangeActions({
  tenantId,
  change,
  rerunnable,
}: {
  tenantId: string;
  change: { id: string; status: string; landWhenReady: boolean; tasks: TaskRow[] };
  /** Its completed Tasks may run again: the newest Candidate conflicted or was rejected (core's completedTasksRerunnable). */
  rerunnable: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.change.get.queryKey() });
  const landing = useMutation(trpc.change.setLanding.mutationOptions({ onSettled: refresh }));
  const retry = useMutation(trpc.task.retry.mutationOptions({ onSettled: refresh }));
  const cancel = useMutation(trpc.change.cancel.mutationOptions({ onSettled: refresh }));
  const final = change.status === "promoted" || change.status === "cancelled";
  const retryable = change.tasks.filter(
    (t) => t.state === "failed" || t.state === "blocked" || (rerunnable && t.state === "completed"),
  );
  if (final) return null;
  const error = landing.error ?? retry.error ?? cancel.error;
  return (
    <div data-testid="change-actions" className="flex flex-wrap items-center gap-4 text-sm">
      <label className="flex items-center gap-2">
        <input
          type="checkbox"
          data-testid="land-when-ready"
          checked={
            landing.isPending ? (landing.variables?.landWhenReady ?? change.landWhenReady) : change.landWhenReady
          }
          disabled={landing.isPending}
          onChange={(e) => landing.mutate({ tenantId, changeId: change.id, landWhenReady: e.target.checked })}
        />
        Land when ready
        <span className="text-xs text-slate-500">(promoted without another click once verified and approved)</span>
      </label>
      {retryable.map((t) => (
        <button
          key={t.id}
          type="button"
          data-testid={`retry-task-${t.key}`}
          disabled={retry.isPending}
          onClick={() => retry.mutate({ tenantId, taskId: t.id })}
          className="rounded border border-slate-300 bg-white px-2 py-1 hover:bg-slate-50 disabled:opacity-50"
        >
          {t.state === "completed" ? `Re-run ${t.key} on the new base` : `Retry ${t.key}`}
          {t.blockedLimit ? ` (blocked: ${t.blockedLimit})` : ""}
        </button>
      ))}
      <button
        type="button"
        data-testid="cancel-change"
        disabled={cancel.isPending}
        onClick={() => {
          const reason = window.prompt("Why cancel this Change? (shown on the Change)");
          if (reason?.trim()) cancel.mutate({ tenantId, changeId: change.id, reason: reason.trim() });
        }}
        className="ml-auto rounded border border-red-300 bg-white px-2 py-1 text-red-800 hover:bg-red-50 disabled:opacity-50"
      >
        Cancel Change
      </button>
      {error && (
        <p role="alert" data-testid="change-action-error" className="basis-full text-red-700">
          {error.message}
        </p>
      )}
    </div>
  );
}
