"use client";

import type { TranscriptStep } from "@rhumbatron/core";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { clip, type StepRow, stepRows, type TranscriptSummary, transcriptHeadline } from "../../lib/transcript-view.ts";
import { useTRPC } from "../../trpc/client.tsx";
import { NotReady } from "../query-state.tsx";

/** While the run is under way, its transcript is asked for again this often (the Change page's pace). */
const TRANSCRIPT_LIVE_REFETCH_MS = 2_000;

/** The run's summary in one line: program and version, status, tokens, cost, hosts (refused in a warning tone). */
export function TranscriptHeader({ summary, status }: { summary: TranscriptSummary; status: string }) {
  const h = transcriptHeadline(summary);
  return (
    <p data-testid="transcript-header" className="w-full break-words text-xs text-slate-600">
      <span className="font-mono font-medium text-slate-800">{h.program}</span> · {status} · {h.tokens} · {h.cost} ·{" "}
      <span data-testid="transcript-reached" className="font-mono">
        {h.reached}
      </span>
      {h.refused && (
        <>
          {" "}
          ·{" "}
          <span data-testid="transcript-refused" className="rounded bg-amber-100 px-1 font-mono text-amber-900">
            {h.refused}
          </span>
        </>
      )}
    </p>
  );
}

/**
 * A run's transcript, read on demand: the steps the program took, in order, as a timeline. Asked for
 * again while the run is live; a finished run's transcript never changes.
 */
export function RunTranscript({
  tenantId,
  taskId,
  runId,
  live,
}: {
  tenantId: string;
  taskId: string;
  runId: string;
  live: boolean;
}) {
  const trpc = useTRPC();
  const q = useQuery(
    trpc.task.transcript.queryOptions(
      { tenantId, taskId },
      { refetchInterval: live ? TRANSCRIPT_LIVE_REFETCH_MS : false, staleTime: live ? 0 : Number.POSITIVE_INFINITY },
    ),
  );
  if (!q.isSuccess)
    return <NotReady query={q} testId="transcript" what="the transcript" label="Loading the transcript…" />;
  const run = q.data.runs.find((r) => r.runId === runId);
  return (
    <div className="space-y-2">
      {run?.steps ? (
        <TranscriptTimeline steps={run.steps} />
      ) : (
        <p data-testid="transcript" data-state="none" className="text-xs text-slate-500">
          {live
            ? "No steps yet: they are kept when the program's run ends."
            : "Its steps are no longer stored; the line above is what the run reported."}
        </p>
      )}
      <p className="text-xs text-slate-500">
        From a terminal: <code className="break-all font-mono">rhumbatron task transcript {taskId}</code>
      </p>
    </div>
  );
}

const STEP_TONE: Record<StepRow["tone"], string> = {
  plain: "bg-slate-100 text-slate-700",
  bad: "bg-red-100 text-red-800",
  quiet: "bg-slate-50 text-slate-500",
};

/** The steps as a timeline: time (when the program stamped it), what happened, its detail and output. */
export function TranscriptTimeline({ steps }: { steps: readonly TranscriptStep[] }) {
  if (steps.length === 0) {
    return (
      <p data-testid="transcript" data-state="empty" className="text-xs text-slate-500">
        The program reported no steps.
      </p>
    );
  }
  return (
    <ol data-testid="transcript" data-state="ready" className="space-y-1 border-l border-slate-200 pl-3 text-xs">
      {stepRows(steps).map((row, i) => (
        <li
          // Steps never move: their position is their identity.
          // biome-ignore lint/suspicious/noArrayIndexKey: a transcript is append-only
          key={i}
          data-testid="transcript-step"
          data-kind={row.kind}
          data-tone={row.tone}
          className="flex min-w-0 flex-wrap items-baseline gap-x-2 gap-y-0.5"
        >
          {row.at && (
            <time dateTime={row.at} className="tabular-nums text-slate-400">
              {new Date(row.at).toLocaleTimeString()}
            </time>
          )}
          <span className={`rounded px-1.5 py-0.5 ${STEP_TONE[row.tone]}`}>{row.what}</span>
          <ClippedText
            text={row.detail}
            className={row.kind === "message" ? "text-slate-800" : "font-mono text-slate-700"}
          />
          {row.output && (
            <ClippedText text={row.output} className="w-full rounded bg-slate-50 p-1 font-mono text-slate-600" />
          )}
        </li>
      ))}
    </ol>
  );
}

/** Long text cut at a few lines, with "show all" to read the rest in place. */
function ClippedText({ text, className }: { text: string; className: string }) {
  const [all, setAll] = useState(false);
  const { shown, hidden } = clip(text);
  return (
    <span className={`min-w-0 whitespace-pre-wrap break-words [overflow-wrap:anywhere] ${className}`}>
      {all ? text : shown}
      {hidden > 0 && (
        <button
          type="button"
          data-testid="transcript-show-all"
          onClick={() => setAll(!all)}
          className="ml-1 text-sky-700 underline-offset-2 hover:underline"
        >
          {all ? "show less" : `… show all (${hidden.toLocaleString("en-US")} more characters)`}
        </button>
      )}
    </span>
  );
}
