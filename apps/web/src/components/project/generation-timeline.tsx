"use client";

import type { GenerationEntry } from "@rhumbatron/db";
import { useMemo } from "react";
import { generationGitGraph } from "../../lib/generation-graph.ts";
import { MermaidDiagram } from "../mermaid-diagram.tsx";

/**
 * The canonical generation timeline: a gitGraph of `main` (S0, S1, …, each with the Candidate it
 * came from) and the same history as a list, which carries the links and the test hooks.
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
  const source = useMemo(() => generationGitGraph(generations, current), [generations, current]);
  if (generations.length === 0) {
    return (
      <p data-testid="generation-timeline" data-state="empty" className="text-sm text-slate-500">
        No generation yet: S0 is recorded when the worker has provisioned the project from its template.
      </p>
    );
  }
  return (
    <div data-testid="generation-timeline" data-state="ready" className="space-y-3">
      <MermaidDiagram source={source} label="canonical generation timeline" testId="generation-graph" />
      <ol className="divide-y divide-slate-100 text-sm">
        {[...generations].reverse().map((g) => (
          <li
            key={g.generation}
            data-testid={`generation-S${g.generation}`}
            data-candidate-id={g.candidateId ?? ""}
            className="flex flex-wrap items-baseline gap-x-3 gap-y-1 py-1.5"
          >
            <span className="w-12 font-mono font-semibold">S{g.generation}</span>
            {g.generation === current && (
              <span className="rounded bg-emerald-100 px-1.5 py-0.5 text-xs text-emerald-800">canonical</span>
            )}
            <code title={g.commit} className="font-mono text-xs text-slate-500">
              {g.commit.slice(0, 10)}
            </code>
            {g.candidateId ? (
              <a
                href={`/projects/${projectId}/candidates/${g.candidateId}`}
                className="font-mono text-xs text-sky-800 underline"
              >
                {g.candidateId}
              </a>
            ) : (
              <span className="text-xs text-slate-500">project template</span>
            )}
            {g.changeId && (
              <a href={`/projects/${projectId}/changes/${g.changeId}`} className="text-xs text-sky-800 underline">
                {g.changeTitle ?? g.changeId}
              </a>
            )}
            <time dateTime={g.createdAt.toISOString()} className="ml-auto text-xs text-slate-400">
              {g.createdAt.toLocaleString()}
            </time>
          </li>
        ))}
      </ol>
    </div>
  );
}
