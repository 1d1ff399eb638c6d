import type { CheckVerdict, PlannedCheck } from "@rhumbatron/core";
import type { ReactNode } from "react";
import {
  checkRows,
  checkTone,
  gapStyle,
  TONE_CLASSES,
  type UnrecordedCheck,
  unrecordedCheck,
} from "../../lib/candidate-view.ts";
import { Empty, Panel } from "../query-state.tsx";
import { Badge } from "./badges.tsx";
import { blobHref } from "./composition-panel.tsx";
import { EvidenceItem } from "./evidence-item.tsx";
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
      <CheckHeading
        checkId={checkId}
        kind={check?.kind ?? judged?.kind ?? ""}
        check={check}
        verdict={verdict}
        unrecorded={unrecorded}
      />
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
      <CheckEvidence
        evidence={evidence}
        projectId={projectId}
        judgedId={judged?.id}
        isGap={!verdict?.satisfied}
        bound={check?.metric}
      />
    </li>
  );
}

/** A check's ID and kind, with its verdict: satisfied, not recorded yet, its gap, or not in the plan. */
function CheckHeading({
  checkId,
  kind,
  check,
  verdict,
  unrecorded,
}: {
  checkId: string;
  kind: string;
  check: PlannedCheck | null;
  verdict: CheckVerdict | null;
  unrecorded: UnrecordedCheck | null;
}) {
  const gap = verdict?.gap ?? null;
  return (
    <div className="flex flex-wrap items-center justify-between gap-2">
      <div className="flex items-center gap-2">
        <span className="font-mono font-medium">{checkId}</span>
        <span className="text-xs opacity-75">{kind}</span>
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
  );
}

/** A check's Evidence records, or that none is recorded. */
function CheckEvidence({
  evidence,
  projectId,
  judgedId,
  isGap,
  bound,
}: {
  evidence: CandidateEvidence[];
  projectId: string;
  judgedId: string | undefined;
  isGap: boolean;
  bound: { name: string; below: number } | undefined;
}) {
  return evidence.length === 0 ? (
    <p className="mt-2 text-xs opacity-75">No Evidence recorded.</p>
  ) : (
    <ul className="mt-2 space-y-2">
      {evidence.map((e) => (
        <EvidenceItem key={e.id} e={e} projectId={projectId} judged={e.id === judgedId} isGap={isGap} bound={bound} />
      ))}
    </ul>
  );
}
