import type { CheckVerdict, PlannedCheck } from "@rhumbatron/core";
import type { ReactNode } from "react";
import {
  COVERAGE_LABELS,
  checkRows,
  checkTone,
  durationAgainstTimeout,
  evidenceTone,
  gapStyle,
  TONE_CLASSES,
  unrecordedCheck,
} from "../../lib/candidate-view.ts";
import { Empty, Panel } from "../query-state.tsx";
import { Time } from "../time.tsx";
import { Badge } from "./badges.tsx";
import { blobHref } from "./composition-panel.tsx";
import { RerunRefusal } from "./rerun-check.tsx";
import type { CandidateDetail, CandidateEvidence } from "./types.ts";

/** The Verification Plan: which policy chose which checks, and whether a person must approve. */
export function PlanPanel({ candidate }: { candidate: CandidateDetail }) {
  const plan = candidate.plan;
  if (!plan) {
    return (
      <Panel title="Verification plan" testId="candidate-plan">
        <Empty testId="candidate-plan-empty">No plan yet: the verification workflow has not planned the checks.</Empty>
      </Panel>
    );
  }
  return (
    <Panel title="Verification plan" testId="candidate-plan">
      <dl className="grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1 text-sm">
        <dt className="text-slate-500">Policy</dt>
        <dd data-testid="plan-policy">
          {plan.policyId} v{plan.policyVersion} · risk tier {plan.riskTier}
        </dd>
        <dt className="text-slate-500">Human gate</dt>
        <dd data-testid="plan-human-gate" data-human-gate={String(plan.humanGate)}>
          {plan.humanGate ? "a person must approve the composed tree" : "no approval needed"}
          {plan.humanGateReasons.length > 0 && (
            <ul className="list-disc pl-5 text-slate-600">
              {plan.humanGateReasons.map((r) => (
                <li key={r}>{r}</li>
              ))}
            </ul>
          )}
        </dd>
        <dt className="text-slate-500">Checks from</dt>
        <dd data-testid="plan-checks-source" data-source={plan.checksSource?.kind ?? "unknown"}>
          <ChecksSourceLine source={plan.checksSource} />
        </dd>
        {(plan.requires ?? []).length > 0 && (
          <>
            <dt className="text-slate-500">Requires</dt>
            <dd data-testid="plan-requires" className="font-mono text-xs">
              {(plan.requires ?? []).join(", ")}
            </dd>
          </>
        )}
        {(plan.editsTheGate ?? []).length > 0 && (
          <>
            <dt className="text-slate-500">Edits the gate</dt>
            <dd data-testid="plan-edits-gate" className="font-medium text-amber-800">
              this Change edits {(plan.editsTheGate ?? []).join(", ")}: a person must approve it, and its checks apply
              from the next generation (this Candidate is judged by the base's)
            </dd>
          </>
        )}
        <dt className="text-slate-500">Checks</dt>
        <dd>{plan.checks.length}</dd>
      </dl>
    </Panel>
  );
}

/** Where the plan's checks come from: the base's checks file, or detected with the file to commit. */
function ChecksSourceLine({ source }: { source: NonNullable<CandidateDetail["plan"]>["checksSource"] }) {
  if (!source) return <span>the checks built into an earlier version</span>;
  if (source.kind === "file") {
    return (
      <span>
        <code className="font-mono text-xs">{source.path}</code> at the base ({source.commit.slice(0, 10)})
      </span>
    );
  }
  return (
    <span>
      <Badge tone="neutral" testId="plan-detected">
        detected
      </Badge>{" "}
      no checks file at the base ({source.commit.slice(0, 10)}); checks proposed from {source.reasons.join("; ")}.{" "}
      <a
        data-testid="plan-proposed-file"
        className="text-sky-700 underline"
        href={blobHref(source.proposalKey)}
        target="_blank"
        rel="noreferrer"
      >
        Show the proposed checks file
      </a>{" "}
      (commit it as .rhumbatron/checks.yml to make these the project's checks)
    </span>
  );
}

/**
 * Every planned check with the gate's verdict and every Evidence record, newest first. A failing
 * check that cannot be rerun says why; the reruns that are allowed are offered in the decision header.
 */
export function ChecksPanel({ candidate }: { candidate: CandidateDetail }) {
  const plan = candidate.plan;
  const rows = checkRows<CandidateEvidence>(plan?.checks ?? [], candidate.gate?.verdicts ?? [], candidate.evidence);
  return (
    <Panel title="Checks and Evidence" testId="candidate-checks">
      {rows.length === 0 ? (
        <Empty testId="candidate-checks-empty">No checks planned and no Evidence recorded yet.</Empty>
      ) : (
        <ul className="space-y-3">
          {rows.map((row) => (
            <CheckItem
              key={row.checkId}
              candidateStatus={candidate.status}
              projectId={candidate.projectId}
              check={row.check}
              verdict={row.verdict}
              evidence={row.evidence}
              action={
                <RerunRefusal
                  option={candidate.rerunOptions.find((o) => o.checkId === row.checkId) ?? null}
                  failing={row.verdict?.gap === "error" || row.verdict?.gap === "failed"}
                />
              }
            />
          ))}
        </ul>
      )}
    </Panel>
  );
}

function CheckItem({
  candidateStatus,
  projectId,
  check,
  verdict,
  evidence,
  action,
}: {
  candidateStatus: string;
  projectId: string;
  check: PlannedCheck | null;
  verdict: CheckVerdict | null;
  evidence: CandidateEvidence[];
  action: ReactNode;
}) {
  const checkId = check?.id ?? evidence[0]?.checkId ?? "unknown";
  const judged = evidence.find((e) => e.id === verdict?.evidenceId) ?? evidence[0] ?? null;
  // A planned check with no record is still running, or was stopped with its Candidate (stale or
  // cancelled) and recorded nothing: said so, never as a failure.
  const unrecorded = check && evidence.length === 0 && !verdict?.satisfied ? unrecordedCheck(candidateStatus) : null;
  // Records of a check the plan does not name prove nothing: neutral, never green.
  const tone = unrecorded
    ? unrecorded.tone
    : check
      ? checkTone({
          gap: verdict?.gap ?? null,
          satisfied: verdict?.satisfied ?? false,
          evidenceStatus: judged?.status ?? null,
        })
      : "neutral";
  const gap = verdict?.gap ?? null;
  return (
    <li
      data-testid={`check-${checkId}`}
      data-status={judged?.status ?? "none"}
      data-gap={gap ?? (verdict?.satisfied ? "none" : check ? "missing" : "unplanned")}
      data-unrecorded={unrecorded?.kind}
      className={`min-w-0 rounded border p-3 [overflow-wrap:anywhere] ${TONE_CLASSES[tone]}`}
    >
      <div className="flex flex-wrap items-center justify-between gap-2">
        <div className="flex items-center gap-2">
          <span className="font-mono font-medium">{checkId}</span>
          <span className="text-xs opacity-75">{check?.kind ?? judged?.kind ?? ""}</span>
        </div>
        <div className="flex items-center gap-2">
          {verdict?.satisfied ? (
            <Badge tone="pass">satisfied</Badge>
          ) : unrecorded ? (
            <Badge tone={unrecorded.tone} testId="check-unrecorded">
              {unrecorded.label}
            </Badge>
          ) : check ? (
            <Badge tone={gapStyle(gap ?? "missing").tone}>gap: {gapStyle(gap ?? "missing").label}</Badge>
          ) : (
            <Badge tone="neutral">not in the plan</Badge>
          )}
        </div>
      </div>
      {check && (
        <p className="mt-1 text-xs opacity-80">
          timeout {check.timeoutSeconds} s
          {check.metric ? ` · ${check.metric.name} must be below ${check.metric.below}` : ""}
          {check.reason ? ` · ${check.reason}` : ""}
        </p>
      )}
      {unrecorded ? (
        <p className="mt-1 text-xs">{unrecorded.meaning}</p>
      ) : (
        verdict && !verdict.satisfied && <p className="mt-1 text-xs">{verdict.detail}</p>
      )}
      {action}
      {evidence.length === 0 ? (
        <p className="mt-2 text-xs opacity-75">No Evidence recorded.</p>
      ) : (
        <ul className="mt-2 space-y-2">
          {evidence.map((e) => (
            <EvidenceItem
              key={e.id}
              e={e}
              projectId={projectId}
              judged={e.id === judged?.id}
              isGap={!verdict?.satisfied}
              bound={check?.metric}
            />
          ))}
        </ul>
      )}
    </li>
  );
}

function metricEntries(metrics: unknown): Array<[string, string]> {
  if (!metrics || typeof metrics !== "object" || Array.isArray(metrics)) return [];
  return Object.entries(metrics as Record<string, unknown>).map(([k, v]) => [k, String(v)]);
}

function EvidenceItem({
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
  const duration = durationAgainstTimeout(e.durationMs, e.timeoutSeconds);
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
        {e.reusedFrom && (
          <span data-testid="evidence-reused" className="flex items-center gap-1">
            <Badge tone="neutral">reused</Badge>
            <span className="text-slate-600">
              from{" "}
              {e.reusedFrom.candidateId ? (
                <a
                  data-testid="evidence-reused-from"
                  className="font-mono underline"
                  href={`/projects/${projectId}/candidates/${e.reusedFrom.candidateId}`}
                >
                  {e.reusedFrom.candidateId}
                </a>
              ) : (
                <span className="font-mono">{e.reusedFrom.evidenceId}</span>
              )}
              ; it did not run for this Candidate
            </span>
          </span>
        )}
      </div>
      {!e.reusedFrom && (
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
      )}
      {metrics.length > 0 && (
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
      )}
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
      <div className="mt-1 flex flex-wrap items-start gap-3">
        {e.outputKey ? (
          <a
            data-testid="evidence-output"
            className="text-sky-700 underline"
            href={blobHref(e.outputKey)}
            target="_blank"
            rel="noreferrer"
          >
            output log
          </a>
        ) : (
          <span className="text-slate-400">no output stored</span>
        )}
        {e.attachments
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
        {e.attachments
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
    </li>
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

/** One test's outcome as the check's report gave it (apps/worker/src/verification/reports.ts). */
interface TestOutcomeView {
  id: string;
  name: string;
  suite: string[];
  file: string | null;
  status: "passed" | "failed" | "skipped";
  durationMs: number | null;
  message: string | null;
}

const isTestOutcome = (t: unknown): t is TestOutcomeView =>
  !!t && typeof t === "object" && typeof (t as TestOutcomeView).name === "string";

/** Each test of the record's report, failing first with its message; the passing ones folded. */
function TestResults({ tests }: { tests: unknown }) {
  if (!Array.isArray(tests)) return null;
  const all = tests.filter(isTestOutcome);
  const failing = all.filter((t) => t.status === "failed");
  const rest = all.filter((t) => t.status !== "failed");
  const label = (t: TestOutcomeView) => [...t.suite, t.name].join(" › ");
  return (
    <div data-testid="evidence-tests" className="mt-1">
      {failing.length > 0 && (
        <ul className="space-y-1">
          {failing.map((t) => (
            <li key={t.id} data-testid="evidence-test-failed" className="rounded bg-red-50 p-1">
              <span className="font-medium text-red-800">✗ {label(t)}</span>
              {t.file && <span className="text-slate-500"> ({t.file})</span>}
              {t.message && (
                <pre className="mt-0.5 max-h-32 overflow-auto whitespace-pre-wrap font-mono text-[11px] text-red-900">
                  {t.message}
                </pre>
              )}
            </li>
          ))}
        </ul>
      )}
      {rest.length > 0 && (
        <details className="mt-1">
          <summary className="cursor-pointer text-slate-600">
            {rest.filter((t) => t.status === "passed").length} passed,{" "}
            {rest.filter((t) => t.status === "skipped").length} skipped: show each test
          </summary>
          <ul data-testid="evidence-tests-rest" className="mt-1 max-h-64 overflow-auto">
            {rest.map((t) => (
              <li key={t.id} data-status={t.status}>
                {t.status === "passed" ? "✓" : "–"} {label(t)}
                {t.durationMs !== null && <span className="text-slate-500"> {Math.round(t.durationMs)} ms</span>}
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}
