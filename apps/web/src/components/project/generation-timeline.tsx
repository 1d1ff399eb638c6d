"use client";

import type { GenerationEntry } from "@rhumbatron/db";
import { useMemo } from "react";
import { generationRows, type TimelineRow } from "../../lib/generation-graph.ts";

/** Where a row's node and label sit in its cell (px from the top): level with the row's first line of text. */
const NODE_Y = 16;
const NODE_X = 10;

/**
 * The canonical generation timeline: one row per generation, newest first (generation, Change, who
 * promoted it, when, commit), with the line of generations drawn down the first column, a node in
 * each row. The drawing and the list are one table, so they hold the same generations in the same
 * order, level, and the Change titles are shown whole. On a phone, who, when and the commit go
 * under the title instead of columns of their own.
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
  const rows = useMemo(() => generationRows(generations, current), [generations, current]);
  if (generations.length === 0) {
    return (
      <p data-testid="generation-timeline" data-state="empty" className="text-sm text-slate-500">
        No generation yet: S0 is recorded when the worker has provisioned the project from its template.
      </p>
    );
  }
  return (
    <div data-testid="generation-timeline" data-state="ready" className="overflow-x-auto">
      <table
        data-testid="generation-graph"
        aria-label="canonical generation timeline"
        className="w-full border-collapse text-left text-sm"
      >
        <thead className="text-xs text-slate-500">
          <tr>
            <th className="w-24 py-1 pr-3 font-normal">Generation</th>
            <th className="py-1 pr-3 font-normal">Change</th>
            <th className="hidden py-1 pr-3 font-normal sm:table-cell">Promoted by</th>
            <th className="hidden py-1 pr-3 font-normal sm:table-cell">Time (UTC)</th>
            <th className="hidden py-1 pr-3 font-normal sm:table-cell">Commit</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {rows.map((r) => (
            <GenerationRow key={r.generation} r={r} projectId={projectId} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One generation's row: its piece of the line, its Change and Candidate, who promoted it, when, and its commit. */
function GenerationRow({ r, projectId }: { r: TimelineRow; projectId: string }) {
  return (
    <tr data-testid={`generation-S${r.generation}`} data-candidate-id={r.candidateId ?? ""}>
      <td className="relative w-24 pr-3 align-top">
        <RailNode row={r} />
        {/* Below the drawn label: the cell is as tall as the node's row needs. */}
        <div className={r.current ? "pt-7 pb-2 pl-6" : "h-8"}>
          {r.current && (
            <span className="rounded bg-emerald-100 px-1.5 py-0.5 text-xs text-emerald-800">canonical</span>
          )}
        </div>
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
        <p className="text-xs text-slate-500 sm:hidden">
          {r.promotedBy}
          {r.approvedBy && `, approved by ${r.approvedBy}`}
          {r.at && (
            <>
              {" · "}
              <time dateTime={r.at}>{r.time}</time>
            </>
          )}
          {r.shortCommit && (
            <>
              {" · "}
              <code title={r.commit} className="font-mono">
                {r.shortCommit}
              </code>
            </>
          )}
        </p>
      </td>
      <td data-testid="generation-promoted-by" className="hidden py-1.5 pr-3 align-top sm:table-cell">
        {r.promotedBy}
        {r.approvedBy && (
          <span data-testid="generation-approved-by" className="block text-xs text-slate-500">
            approved by {r.approvedBy}
          </span>
        )}
      </td>
      <td className="hidden py-1.5 pr-3 align-top whitespace-nowrap text-xs text-slate-500 sm:table-cell">
        {r.at && <time dateTime={r.at}>{r.time}</time>}
      </td>
      <td className="hidden py-1.5 pr-3 align-top sm:table-cell">
        <code title={r.commit} className="font-mono text-xs text-slate-500">
          {r.shortCommit}
        </code>
      </td>
    </tr>
  );
}

/**
 * One generation's piece of the line: its node and label at the top of the cell, the line through
 * the whole cell (from the node only, in the newest row; to it only, in the oldest) so the rows'
 * pieces join into one line whatever each row's height.
 */
function RailNode({ row }: { row: TimelineRow }) {
  return (
    <svg
      role="img"
      aria-label={row.current ? `${row.label}, canonical` : row.label}
      // A pixel past the cell at each end: the rows' pieces of line meet across the borders between rows.
      className="pointer-events-none absolute inset-x-0 -top-px h-[calc(100%+2px)] w-full overflow-visible"
    >
      {!(row.rail.newest && row.rail.oldest) && (
        <line
          x1={NODE_X}
          x2={NODE_X}
          y1={row.rail.newest ? NODE_Y : 0}
          y2={row.rail.oldest ? NODE_Y : "100%"}
          className="stroke-slate-300"
          strokeWidth={2}
        />
      )}
      <circle
        cx={NODE_X}
        cy={NODE_Y}
        r={5}
        className={row.current ? "fill-emerald-500 stroke-emerald-700" : "fill-white stroke-slate-500"}
        strokeWidth={2}
      />
      <text
        x={NODE_X + 12}
        y={NODE_Y}
        dominantBaseline="central"
        className={`font-mono text-sm font-semibold ${row.current ? "fill-emerald-900" : "fill-slate-800"}`}
      >
        {row.label}
      </text>
    </svg>
  );
}
