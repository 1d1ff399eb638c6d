"use client";

import { useState } from "react";
import { transcriptSummaryOf } from "../../lib/transcript-view.ts";
import { RunContextPacket } from "./context-packet.tsx";
import { RunTranscript, TranscriptHeader } from "./run-transcript.tsx";

export interface RunRow {
  id: string;
  taskId: string;
  agentId: string;
  status: string;
  reason: string;
  fork: string | null;
  startCommit: string | null;
  error: string | null;
  /** A program Agent's transcript summary (agent_runs.transcript); null for other Agents. */
  transcript: unknown;
  createdAt: Date;
  updatedAt: Date;
}

const RUN_TONE: Record<string, string> = {
  queued: "bg-slate-100 text-slate-700",
  running: "bg-amber-100 text-amber-900",
  completed: "bg-emerald-100 text-emerald-800",
  failed: "bg-red-100 text-red-800",
  blocked: "bg-violet-100 text-violet-800",
};

/** The runs still under way: their Context Packet may not be recorded yet. */
const LIVE_RUN = new Set(["queued", "running"]);

/**
 * The Change's Agents, each with its runs (agent_runs) in order: status, Task, why it woke, fork,
 * error, a program Agent's transcript line, and on demand the Context Packet the run was given and
 * the transcript's steps.
 */
export function AgentRuns({
  tenantId,
  runs,
  taskKeys,
}: {
  tenantId: string;
  runs: RunRow[];
  taskKeys: Map<string, string>;
}) {
  if (runs.length === 0) {
    return (
      <p data-testid="agent-runs" data-state="empty" className="text-sm text-slate-500">
        No Agent has run yet: Agents wake when their Task becomes ready.
      </p>
    );
  }
  const byAgent = new Map<string, RunRow[]>();
  for (const r of runs) byAgent.set(r.agentId, [...(byAgent.get(r.agentId) ?? []), r]);
  return (
    <div data-testid="agent-runs" data-state="ready" className="space-y-4">
      {[...byAgent.entries()].map(([agentId, list]) => (
        <section key={agentId} data-testid={`agent-${agentId}`}>
          <h3 className="mb-1 font-mono text-sm font-semibold">{agentId}</h3>
          <ol className="divide-y divide-slate-100 text-sm">
            {list.map((r) => (
              <RunItem key={r.id} tenantId={tenantId} run={r} taskKey={taskKeys.get(r.taskId) ?? r.taskId} />
            ))}
          </ol>
        </section>
      ))}
    </div>
  );
}

function RunItem({ tenantId, run: r, taskKey }: { tenantId: string; run: RunRow; taskKey: string }) {
  const [open, setOpen] = useState(false);
  const [transcriptOpen, setTranscriptOpen] = useState(false);
  const summary = transcriptSummaryOf(r.transcript);
  return (
    <li
      data-testid="agent-run"
      data-run-id={r.id}
      data-task-key={taskKey}
      data-status={r.status}
      className="flex flex-wrap items-baseline gap-x-3 gap-y-1 py-1.5"
    >
      <span className={`rounded px-1.5 py-0.5 text-xs ${RUN_TONE[r.status] ?? "bg-slate-100 text-slate-700"}`}>
        {r.status}
      </span>
      <span className="font-mono text-xs">{taskKey}</span>
      <span className="text-xs text-slate-500">woke: {r.reason}</span>
      {r.fork && <span className="font-mono text-xs text-slate-500">{r.fork}</span>}
      <button
        type="button"
        data-testid="context-packet-toggle"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        className="text-xs text-sky-700 underline-offset-2 hover:underline"
      >
        {open ? "Hide context" : "Context"}
      </button>
      {summary && (
        <button
          type="button"
          data-testid="transcript-toggle"
          aria-expanded={transcriptOpen}
          onClick={() => setTranscriptOpen(!transcriptOpen)}
          className="text-xs text-sky-700 underline-offset-2 hover:underline"
        >
          {transcriptOpen
            ? "Hide transcript"
            : `Transcript (${summary.steps} ${summary.steps === 1 ? "step" : "steps"})`}
        </button>
      )}
      <time dateTime={r.createdAt.toISOString()} className="ml-auto text-xs text-slate-400">
        {r.createdAt.toLocaleString()}
      </time>
      {summary && <TranscriptHeader summary={summary} status={r.status} />}
      {r.error && (
        <p data-testid="agent-run-error" className="w-full break-words text-xs text-red-800">
          {r.error}
        </p>
      )}
      {summary && transcriptOpen && (
        <div data-testid="run-transcript" className="w-full min-w-0 rounded border border-slate-200 p-2">
          <RunTranscript tenantId={tenantId} taskId={r.taskId} runId={r.id} live={LIVE_RUN.has(r.status)} />
        </div>
      )}
      {open && (
        <div className="w-full rounded border border-slate-200 p-2">
          <RunContextPacket tenantId={tenantId} runId={r.id} live={LIVE_RUN.has(r.status)} />
        </div>
      )}
    </li>
  );
}
