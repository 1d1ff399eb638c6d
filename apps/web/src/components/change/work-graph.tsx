"use client";

import { TASK_STATES, type TaskState } from "@rhumbatron/core";
import { useMemo } from "react";
import {
  blockedMeaning,
  type ChartTask,
  TASK_STATE_COLORS,
  taskStateLabel,
  workGraphFlowchart,
} from "../../lib/work-graph-chart.ts";
import { MermaidDiagram } from "../mermaid-diagram.tsx";

export interface WorkGraphTask extends ChartTask {
  id: string;
  agentId: string | null;
  intents: unknown;
}

function intentsOf(value: unknown): { paths: string[]; prefixes: string[] } {
  const v = (value ?? {}) as { paths?: unknown; prefixes?: unknown };
  const list = (x: unknown) => (Array.isArray(x) ? x.filter((s): s is string => typeof s === "string") : []);
  return { paths: list(v.paths), prefixes: list(v.prefixes) };
}

export function StateChip({ state, blockedLimit }: { state: TaskState; blockedLimit?: string | null }) {
  const c = TASK_STATE_COLORS[state];
  return (
    <span
      className="inline-flex items-center rounded-full border px-2 py-0.5 text-xs font-medium"
      style={{ background: c.fill, borderColor: c.stroke, color: c.text }}
    >
      {taskStateLabel({ state, blockedLimit: blockedLimit ?? null })}
    </span>
  );
}

/**
 * The Work Graph: a mermaid flowchart coloured by Task state (a classDef per state) and, under it,
 * the Tasks as a list with their dependencies and resource intents. Each list item is
 * `task-node-<key>` with `data-state`, so a reader or a test can follow a Task's state.
 */
export function WorkGraph({
  tasks,
  blockedReasons,
}: {
  tasks: WorkGraphTask[];
  /** A blocked Task's reason in its run's words (what is missing and what to do), by Task ID. */
  blockedReasons?: ReadonlyMap<string, string>;
}) {
  const source = useMemo(() => workGraphFlowchart(tasks), [tasks]);
  return (
    <div className="space-y-4">
      <MermaidDiagram source={source} label="Work Graph" testId="work-graph" />
      <ul aria-label="Task states" className="flex flex-wrap gap-2 text-xs" data-testid="work-graph-legend">
        {TASK_STATES.map((s) => (
          <li key={s}>
            <StateChip state={s} />
          </li>
        ))}
      </ul>
      <ol data-testid="task-list" className="divide-y divide-slate-100">
        {tasks.map((t) => {
          const intents = intentsOf(t.intents);
          return (
            <li
              key={t.id}
              data-testid={`task-node-${t.key}`}
              data-state={t.state}
              data-blocked-limit={t.blockedLimit ?? undefined}
              className="flex flex-wrap items-start justify-between gap-2 py-2 text-sm"
            >
              <div className="min-w-0">
                <div>
                  <span className="font-mono font-semibold">{t.key}</span> · {t.title}
                </div>
                <div className="text-xs text-slate-500">
                  {t.dependencies.length > 0 ? <>after {t.dependencies.join(", ")}</> : "no dependencies"}
                  {intents.paths.length + intents.prefixes.length > 0 && (
                    <>
                      {" "}
                      · touches{" "}
                      <span className="font-mono">
                        {[...intents.paths, ...intents.prefixes.map((p) => `${p}*`)].join(", ")}
                      </span>
                    </>
                  )}
                  {t.agentId && (
                    <>
                      {" "}
                      · Agent <span className="font-mono">{t.agentId}</span>
                    </>
                  )}
                </div>
              </div>
              <span data-testid="task-state">
                <StateChip state={t.state} blockedLimit={t.blockedLimit} />
              </span>
              {t.state === "blocked" && (
                <p data-testid="task-blocked-reason" className="basis-full text-xs break-words text-violet-900">
                  {blockedMeaning(t.blockedLimit) ?? "Blocked."}
                  {blockedReasons?.get(t.id) && <> Its run says: {blockedReasons.get(t.id)}</>}
                </p>
              )}
            </li>
          );
        })}
      </ol>
    </div>
  );
}
