import { COVERAGE_LABELS, durationAgainstTimeout, evidenceTone } from "../../lib/candidate-view.ts";
import { Time } from "../time.tsx";
import { Badge } from "./badges.tsx";
import { blobHref } from "./composition-panel.tsx";
import { TestResults } from "./test-results.tsx";
import type { CandidateEvidence } from "./types.ts";

function metricEntries(metrics: unknown): Array<[string, string]> {
  if (!metrics || typeof metrics !== "object" || Array.isArray(metrics)) return [];
  return Object.entries(metrics as Record<string, unknown>).map(([k, v]) => [k, String(v)]);
}

/** One Evidence record of a check: its status, coverage, timing, metrics, tests, command, output and files. */
export function EvidenceItem({
  e,
  projectId,
  judged,
  isGap,
  bound,
}: {
  e: CandidateEvidence;
  projectId: string;
  judged: boolean;
  isGap: boolean;
  bound: { name: string; below: number } | undefined;
}) {
  const metrics = metricEntries(e.metrics);
  return (
    <li
      data-testid="evidence-record"
      data-evidence-id={e.id}
      data-status={e.status}
      data-coverage={e.coverage}
      className="min-w-0 rounded border border-slate-200 bg-white p-2 text-xs [overflow-wrap:anywhere] text-slate-800"
    >
      <div className="flex flex-wrap items-center gap-2">
        <Badge tone={evidenceTone(e.status, isGap)} testId="evidence-status">
          {e.status}
        </Badge>
        <span data-testid="evidence-coverage" className="text-slate-600">
          {COVERAGE_LABELS[e.coverage] ?? e.coverage}
        </span>
        <span className="text-slate-500">
          <Time value={e.completedAt} />
        </span>
        {judged && <span className="text-slate-500">(the record the gate judged)</span>}
        {/* A reused record's check did not run for this Candidate (docs/checks-file.md, Reused Evidence). */}
        {e.reusedFrom && <ReusedFrom reusedFrom={e.reusedFrom} projectId={projectId} />}
      </div>
      {!e.reusedFrom && <EvidenceDuration durationMs={e.durationMs} timeoutSeconds={e.timeoutSeconds} />}
      {metrics.length > 0 && <EvidenceMetrics metrics={metrics} bound={bound} />}
      {e.detail && <p className="mt-1 whitespace-pre-wrap text-slate-700">{e.detail}</p>}
      <TestResults tests={e.tests} />
      {e.command && (
        <p data-testid="evidence-command" className="mt-1 font-mono text-slate-600">
          {e.reusedFrom ? "ran for the Candidate it is reused from: " : ""}$ {e.command}
        </p>
      )}
      {e.outputTail && (
        <figure className="mt-1">
          <figcaption className="text-slate-500">the end of its output</figcaption>
          <pre
            data-testid="evidence-output-tail"
            className="max-h-72 overflow-auto whitespace-pre-wrap rounded bg-slate-900 p-2 font-mono text-[11px] leading-snug text-slate-100"
          >
            {e.outputTail}
          </pre>
        </figure>
      )}
      <EvidenceFiles outputKey={e.outputKey} attachments={e.attachments} />
    </li>
  );
}

/** Where a reused record comes from: the Candidate it ran for, or the record's own ID. */
function ReusedFrom({
  reusedFrom,
  projectId,
}: {
  reusedFrom: NonNullable<CandidateEvidence["reusedFrom"]>;
  projectId: string;
}) {
  return (
    <span data-testid="evidence-reused" className="flex items-center gap-1">
      <Badge tone="neutral">reused</Badge>
      <span className="text-slate-600">
        from{" "}
        {reusedFrom.candidateId ? (
          <a
            data-testid="evidence-reused-from"
            className="font-mono underline"
            href={`/projects/${projectId}/candidates/${reusedFrom.candidateId}`}
          >
            {reusedFrom.candidateId}
          </a>
        ) : (
          <span className="font-mono">{reusedFrom.evidenceId}</span>
        )}
        ; it did not run for this Candidate
      </span>
    </span>
  );
}

/** How long the check ran against its timeout, as a bar and in words. */
function EvidenceDuration({
  durationMs,
  timeoutSeconds,
}: {
  durationMs: CandidateEvidence["durationMs"];
  timeoutSeconds: CandidateEvidence["timeoutSeconds"];
}) {
  const duration = durationAgainstTimeout(durationMs, timeoutSeconds);
  return (
    <div className="mt-1 flex items-center gap-2">
      <div className="h-1.5 w-32 overflow-hidden rounded bg-slate-100" aria-hidden="true">
        <div
          className={`h-full ${duration.over ? "bg-red-500" : "bg-slate-400"}`}
          style={{ width: `${Math.round(duration.share * 100)}%` }}
        />
      </div>
      <span
        data-testid="evidence-duration"
        data-over={String(duration.over)}
        className={duration.over ? "text-red-700" : ""}
      >
        {duration.label}
        {duration.over ? " (over the timeout)" : ""}
      </span>
    </div>
  );
}

/** The record's metrics, each with the plan's bound when the check names one. */
function EvidenceMetrics({
  metrics,
  bound,
}: {
  metrics: Array<[string, string]>;
  bound: { name: string; below: number } | undefined;
}) {
  return (
    <dl data-testid="evidence-metrics" className="mt-1 flex flex-wrap gap-x-4">
      {metrics.map(([k, v]) => (
        <div key={k} className="flex gap-1">
          <dt className="text-slate-500">{k}</dt>
          <dd className="font-mono">
            {v}
            {bound?.name === k ? ` (must be below ${bound.below})` : ""}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** The record's stored files: the output log, the kept files to download, and the screenshots. */
function EvidenceFiles({
  outputKey,
  attachments,
}: {
  outputKey: CandidateEvidence["outputKey"];
  attachments: CandidateEvidence["attachments"];
}) {
  return (
    <div className="mt-1 flex flex-wrap items-start gap-3">
      {outputKey ? (
        <a
          data-testid="evidence-output"
          className="text-sky-700 underline"
          href={blobHref(outputKey)}
          target="_blank"
          rel="noreferrer"
        >
          output log
        </a>
      ) : (
        <span className="text-slate-400">no output stored</span>
      )}
      {attachments
        .filter((key) => !key.endsWith(".png"))
        .map((key) => (
          <a
            key={key}
            data-testid="evidence-attachment"
            className="text-sky-700 underline"
            href={blobHref(key)}
            download
          >
            {attachmentLabel(key)}
          </a>
        ))}
      {attachments
        .filter((key) => key.endsWith(".png"))
        .map((key) => (
          <a key={key} href={blobHref(key)} target="_blank" rel="noreferrer">
            {/* biome-ignore lint/performance/noImgElement: private, per-tenant blobs; next/image would proxy and cache them */}
            <img
              data-testid="evidence-screenshot"
              src={blobHref(key)}
              alt={`screenshot ${key.slice(key.lastIndexOf("/") + 1)}`}
              className="max-h-48 rounded border border-slate-200"
            />
          </a>
        ))}
    </div>
  );
}

/**
 * A kept file that is not a screenshot, by what it is: a Playwright trace (open it with `npx
 * playwright show-trace` or trace.playwright.dev) is named after its test's results folder.
 */
function attachmentLabel(key: string): string {
  const name = key.slice(key.lastIndexOf("/") + 1);
  if (name.endsWith("trace.zip")) return `trace: ${name.replace(/__trace\.zip$/, "").replaceAll("__", "/")}`;
  return name;
}
