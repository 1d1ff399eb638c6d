"use client";

import type { GenerationEntry } from "@rhumbatron/db";
import { useMemo } from "react";
import { generationFlowchart, generationRows } from "../../lib/generation-graph.ts";
import { MermaidDiagram } from "../mermaid-diagram.tsx";

/**
 * The canonical generation timeline: the history as a list people read (generation, Change, who
 * promoted it, when, commit), newest first, with the line of generations drawn beside it as a
 * flowchart whose labels sit level in their boxes. The list carries the links and the test hooks.
 */
export function GenerationTimeline({
  projectId,
  generations,
  current,
}: {
  projectId: string;
  generations: GenerationEntry[];
  current: number;
}) {
  const source = useMemo(() => generationFlowchart(generations, current), [generations, current]);
  const rows = useMemo(() => generationRows(generations, current), [generations, current]);
  if (generations.length === 0) {
    return (
      <p data-testid="generation-timeline" data-state="empty" className="text-sm text-slate-500">
        No generation yet: S0 is recorded when the worker has provisioned the project from its template.
      </p>
    );
  }
  return (
    <div data-testid="generation-timeline" data-state="ready" className="grid gap-4 md:grid-cols-[minmax(0,1fr)_16rem]">
      <div className="overflow-x-auto">
        <table className="w-full text-left text-sm">
          <thead className="text-xs text-slate-500">
            <tr>
              <th className="py-1 pr-3 font-normal">Generation</th>
              <th className="py-1 pr-3 font-normal">Change</th>
              <th className="py-1 pr-3 font-normal">Promoted by</th>
              <th className="py-1 pr-3 font-normal">Time (UTC)</th>
              <th className="py-1 pr-3 font-normal">Commit</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {rows.map((r) => (
              <tr
                key={r.generation}
                data-testid={`generation-S${r.generation}`}
                data-candidate-id={r.candidateId ?? ""}
              >
                <td className="py-1.5 pr-3 align-top whitespace-nowrap">
                  <span className="font-mono font-semibold">{r.label}</span>
                  {r.current && (
                    <span className="ml-2 rounded bg-emerald-100 px-1.5 py-0.5 text-xs text-emerald-800">
                      canonical
                    </span>
                  )}
                </td>
                <td className="py-1.5 pr-3 align-top">
                  {r.changeId ? (
                    <a href={`/projects/${projectId}/changes/${r.changeId}`} className="text-sky-800 underline">
                      {r.change}
                    </a>
                  ) : (
                    <span className="text-slate-500">{r.change}</span>
                  )}
                  {r.candidateId && (
                    <a
                      href={`/projects/${projectId}/candidates/${r.candidateId}`}
                      className="block font-mono text-xs break-all text-slate-500 underline"
                    >
                      {r.candidateId}
                    </a>
                  )}
                </td>
                <td data-testid="generation-promoted-by" className="py-1.5 pr-3 align-top">
                  {r.promotedBy}
                  {r.approvedBy && (
                    <span data-testid="generation-approved-by" className="block text-xs text-slate-500">
                      approved by {r.approvedBy}
                    </span>
                  )}
                </td>
                <td className="py-1.5 pr-3 align-top whitespace-nowrap text-xs text-slate-500">
                  {r.at && <time dateTime={r.at}>{r.time}</time>}
                </td>
                <td className="py-1.5 pr-3 align-top">
                  <code title={r.commit} className="font-mono text-xs text-slate-500">
                    {r.shortCommit}
                  </code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <MermaidDiagram source={source} label="canonical generation timeline" testId="generation-graph" />
    </div>
  );
}
