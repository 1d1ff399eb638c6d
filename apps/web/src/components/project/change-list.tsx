"use client";

import { TASK_STATES } from "@rhumbatron/core";
import { useQuery } from "@tanstack/react-query";
import { TASK_STATE_COLORS } from "../../lib/work-graph-chart.ts";
import { useTRPC } from "../../trpc/client.tsx";
import { Empty, NotReady } from "../query-state.tsx";

const LABEL_TONES = {
  neutral: "bg-slate-100 text-slate-700",
  good: "bg-emerald-100 text-emerald-800",
  bad: "bg-red-100 text-red-800",
} as const;

/** A project's Changes, newest first, each with its Tasks counted by state and a link to its page. */
export function ChangeList({ tenantId, projectId }: { tenantId: string; projectId: string }) {
  const trpc = useTRPC();
  const changes = useQuery(trpc.change.list.queryOptions({ tenantId, projectId, limit: 50 }));
  if (!changes.isSuccess)
    return <NotReady query={changes} testId="change-list" what="Changes" label="Loading Changes…" />;
  if (changes.data.length === 0) return <Empty testId="change-list">No Changes yet.</Empty>;
  return (
    <ul data-testid="change-list" data-state="ready" className="divide-y divide-slate-100">
      {changes.data.map((c) => (
        <li
          key={c.id}
          data-testid="change-row"
          data-change-id={c.id}
          className="flex flex-wrap items-center justify-between gap-2 py-2"
        >
          <div className="min-w-0">
            <a href={`/projects/${projectId}/changes/${c.id}`} className="font-medium text-sky-800 hover:underline">
              {c.title}
            </a>
            <div className="text-xs text-slate-500">
              <span className="font-mono">{c.id}</span> · {c.riskTier} risk · {c.createdAt.toLocaleString()}
            </div>
          </div>
          <div className="flex flex-wrap items-center gap-1 text-xs">
            <span
              data-testid="change-status"
              data-status={c.label.label}
              title={c.label.hint ?? undefined}
              className={`rounded px-1.5 py-0.5 ${LABEL_TONES[c.label.tone]}`}
            >
              {c.label.label}
            </span>
            {TASK_STATES.filter((s) => (c.tasksByState[s] ?? 0) > 0).map((s) => (
              <span
                key={s}
                className="rounded px-1.5 py-0.5"
                style={{ background: TASK_STATE_COLORS[s].fill, color: TASK_STATE_COLORS[s].text }}
              >
                {c.tasksByState[s]} {s}
              </span>
            ))}
          </div>
        </li>
      ))}
    </ul>
  );
}
