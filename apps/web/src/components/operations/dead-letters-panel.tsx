"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../../trpc/client.tsx";
import { Empty, NotReady, Panel } from "../query-state.tsx";
import { type DeadLetterRow, OPS_REFETCH_MS } from "./types.ts";

const STATUSES = ["open", "retried", "dismissed"] as const;
type Status = (typeof STATUSES)[number];

/** Dead letters: open ones can be sent back once (Retry) or closed with a reason (Dismiss). */
export function DeadLettersPanel({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const [status, setStatus] = useState<Status>("open");
  const list = useQuery(
    trpc.operations.deadLetters.queryOptions({ tenantId, status }, { refetchInterval: OPS_REFETCH_MS }),
  );
  const tabs = (
    <div className="flex gap-1 text-xs" role="tablist">
      {STATUSES.map((s) => (
        <button
          key={s}
          type="button"
          role="tab"
          aria-selected={s === status}
          data-testid={`dead-letter-status-${s}`}
          onClick={() => setStatus(s)}
          className={`rounded px-2 py-1 ${s === status ? "bg-slate-900 text-white" : "bg-slate-100 text-slate-700"}`}
        >
          {s}
        </button>
      ))}
    </div>
  );
  let body: React.ReactNode;
  if (!list.isSuccess)
    body = <NotReady query={list} testId="dead-letters" what="dead letters" label="Loading dead letters…" />;
  else if (list.data.length === 0) body = <Empty testId="dead-letters">No {status} dead letters.</Empty>;
  else
    body = (
      <ul data-testid="dead-letters" data-state="ready" className="divide-y divide-slate-100">
        {list.data.map((d) => (
          <DeadLetterItem key={d.id} tenantId={tenantId} d={d} />
        ))}
      </ul>
    );
  return (
    <Panel title="Dead letters" testId="operations-dead-letters" actions={tabs}>
      {body}
    </Panel>
  );
}

function DeadLetterItem({ tenantId, d }: { tenantId: string; d: DeadLetterRow }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [reason, setReason] = useState("");
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.operations.pathKey() });
  const retry = useMutation(trpc.operations.retryDeadLetter.mutationOptions({ onSettled: refresh }));
  const dismiss = useMutation(trpc.operations.dismissDeadLetter.mutationOptions({ onSettled: refresh }));
  const busy = retry.isPending || dismiss.isPending;
  const error = retry.error ?? dismiss.error;
  return (
    <li data-testid="dead-letter-row" data-dead-letter-id={d.id} data-status={d.status} className="py-3 text-sm">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <div>
          <span className="font-medium">{d.kind}</span> <span className="text-slate-500">from {d.consumer}</span>
          {d.originQueue && <span className="text-slate-500"> · queue {d.originQueue}</span>}
          {d.projectName && <span className="text-slate-500"> · {d.projectName}</span>}
        </div>
        <span className="text-xs text-slate-500">
          {d.attempts} attempts · {d.createdAt.toLocaleString()}
        </span>
      </div>
      <p className="mt-1 font-mono text-xs break-all text-red-800">{d.reason}</p>
      {d.commandId && <p className="font-mono text-xs text-slate-500">command {d.commandId}</p>}
      <details className="mt-1 text-xs">
        <summary className="cursor-pointer text-slate-500">payload</summary>
        <pre className="mt-1 max-h-48 overflow-auto rounded bg-slate-50 p-2">{JSON.stringify(d.payload, null, 2)}</pre>
      </details>
      {d.status !== "open" ? (
        <p className="mt-1 text-xs text-slate-600">
          {d.status} by {d.resolvedByName ?? "?"} {d.resolvedAt ? `on ${d.resolvedAt.toLocaleString()}` : ""}
          {d.resolveNote ? `: ${d.resolveNote}` : ""}
        </p>
      ) : (
        <div className="mt-2 flex flex-wrap items-center gap-2">
          <button
            type="button"
            data-testid="retry-button"
            disabled={busy}
            onClick={() => retry.mutate({ tenantId, deadLetterId: d.id })}
            className="rounded bg-slate-900 px-2 py-1 text-xs font-medium text-white disabled:opacity-50"
          >
            Retry
          </button>
          <input
            data-testid="dismiss-reason"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            placeholder="Why dismiss it?"
            maxLength={2000}
            aria-label="Reason to dismiss"
            className="min-w-48 flex-1 rounded border border-slate-300 px-2 py-1 text-xs"
          />
          <button
            type="button"
            data-testid="dismiss-button"
            disabled={busy || !reason.trim()}
            title={reason.trim() ? undefined : "Write a reason first"}
            onClick={() => dismiss.mutate({ tenantId, deadLetterId: d.id, reason: reason.trim() })}
            className="rounded border border-slate-300 bg-white px-2 py-1 text-xs font-medium disabled:opacity-50"
          >
            Dismiss
          </button>
        </div>
      )}
      {error && (
        <p role="alert" data-testid="dead-letter-error" className="mt-1 text-xs text-red-800">
          {error.message}
        </p>
      )}
    </li>
  );
}
