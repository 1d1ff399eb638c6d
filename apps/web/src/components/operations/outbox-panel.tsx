"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../../trpc/client.tsx";
import { Empty, NotReady, Panel } from "../query-state.tsx";
import { OPS_REFETCH_MS } from "./types.ts";

const STATES = ["pending", "retry_wait", "failed", "published"] as const;
type State = (typeof STATES)[number];

/** Outbox rows by state; the rows of the chosen state with their last error. */
export function OutboxPanel({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const [state, setState] = useState<State>("failed");
  const counts = useQuery(trpc.operations.outboxCounts.queryOptions({ tenantId }, { refetchInterval: OPS_REFETCH_MS }));
  const rows = useQuery(
    trpc.operations.outbox.queryOptions({ tenantId, state, limit: 50 }, { refetchInterval: OPS_REFETCH_MS }),
  );
  return (
    <Panel title="Outbox" testId="operations-outbox">
      {!counts.isSuccess ? (
        <NotReady query={counts} testId="outbox-counts" what="outbox counts" label="Counting outbox rows…" />
      ) : (
        <div data-testid="outbox-counts" data-state="ready" className="mb-3 grid grid-cols-2 gap-2 sm:grid-cols-4">
          {STATES.map((s) => (
            <button
              key={s}
              type="button"
              data-testid={`outbox-state-${s}`}
              data-count={counts.data[s]}
              aria-pressed={s === state}
              onClick={() => setState(s)}
              className={`rounded border p-2 text-left ${s === state ? "border-slate-900" : "border-slate-200"} ${
                s === "failed" && counts.data[s] > 0 ? "bg-red-50" : "bg-white"
              }`}
            >
              <div className="text-xs text-slate-500">{s.replace("_", " ")}</div>
              <div className="text-lg font-semibold">{counts.data[s]}</div>
            </button>
          ))}
        </div>
      )}
      {!rows.isSuccess ? (
        <NotReady query={rows} testId="outbox-rows" what="outbox rows" label="Loading outbox rows…" />
      ) : rows.data.length === 0 ? (
        <Empty testId="outbox-rows">No {state.replace("_", " ")} outbox rows.</Empty>
      ) : (
        <table data-testid="outbox-rows" data-state="ready" className="w-full text-left text-xs">
          <thead className="text-slate-500">
            <tr>
              <th className="py-1">Event</th>
              <th>Project</th>
              <th>Stream</th>
              <th>Attempts</th>
              <th>Last error</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {rows.data.map((r) => (
              <tr key={r.eventId} data-testid="outbox-row">
                <td className="py-1">
                  <div>{r.eventType}</div>
                  <div className="font-mono text-slate-500">{r.eventId}</div>
                </td>
                <td>{r.projectName}</td>
                <td className="font-mono">{String(r.streamIndex).padStart(2, "0")}</td>
                <td>
                  {r.attempts}
                  {r.nextAttemptAt ? (
                    <div className="text-slate-500">next {r.nextAttemptAt.toLocaleTimeString()}</div>
                  ) : null}
                </td>
                <td className="max-w-xs font-mono break-all text-red-800">{r.lastError ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}
