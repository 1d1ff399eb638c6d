"use client";

import type { Tone } from "../../lib/candidate-view.ts";
import { TONE_CLASSES } from "../../lib/candidate-view.ts";
import { Time } from "../time.tsx";
import { ApprovalActions } from "./approval-panel.tsx";
import { PromoteButton, PromoteOutcome, usePromote } from "./promote-panel.tsx";
import { RerunCheck } from "./rerun-check.tsx";
import type { CandidateDetail } from "./types.ts";

const STATE_TONE: Record<CandidateDetail["decision"]["state"], Tone> = {
  verifying: "pending",
  ready_to_approve: "pending",
  ready_to_promote: "pass",
  blocked: "fail",
  rejected: "fail",
  promoted: "pass",
  stale: "warn",
  cancelled: "neutral",
};

/**
 * The decision first, and the page's one place for what can be done about it: can it be approved,
 * what is it waiting for, what blocks it (each gap and block with its rule), or how it ended; then
 * exactly the actions this state allows (approve or reject the tree, promote, rerun a check, retry
 * the Change's Tasks). The panels below hold the details and records, never a second button.
 */
export function DecisionHeader({
  tenantId,
  candidate,
  canDecide,
  canRerun,
}: {
  tenantId: string;
  candidate: CandidateDetail;
  canDecide: boolean;
  canRerun: boolean;
}) {
  const d = candidate.decision;
  const promote = usePromote();
  const reruns = d.actions.includes("rerun") ? candidate.rerunOptions.filter((o) => o.refusal === null) : [];
  return (
    <section
      data-testid="decision-header"
      data-state={d.state}
      aria-label="Decision"
      className={`rounded border p-3 ${TONE_CLASSES[STATE_TONE[d.state]]}`}
    >
      <p data-testid="decision-headline" className="font-medium">
        {d.headline}
        {d.state === "stale" && candidate.replacedBy && (
          <>
            {" "}
            <a className="underline" href={`./${candidate.replacedBy}`}>
              open it
            </a>
          </>
        )}
      </p>
      {candidate.promotion && (
        <p className="text-sm">
          <Time value={candidate.promotion.at} testId="decision-promoted-at" />
        </p>
      )}
      {d.reasons.length > 0 && (
        <ul data-testid="decision-reasons" className="mt-1 list-disc space-y-0.5 pl-5 text-sm">
          {d.reasons.map((r) => (
            <li key={r} data-testid="decision-reason">
              {r}
            </li>
          ))}
        </ul>
      )}
      {(d.actions.length > 0 || promote.data || promote.error) && (
        <DecisionActions
          tenantId={tenantId}
          candidate={candidate}
          canDecide={canDecide}
          canRerun={canRerun}
          promote={promote}
          reruns={reruns}
        />
      )}
    </section>
  );
}

/** The actions the decision's state allows, each for who may take it, and the last promotion's outcome. */
function DecisionActions({
  tenantId,
  candidate,
  canDecide,
  canRerun,
  promote,
  reruns,
}: {
  tenantId: string;
  candidate: CandidateDetail;
  canDecide: boolean;
  canRerun: boolean;
  promote: ReturnType<typeof usePromote>;
  reruns: CandidateDetail["rerunOptions"];
}) {
  const d = candidate.decision;
  return (
    <div data-testid="decision-actions" className="mt-3 flex flex-wrap items-start gap-3">
      {d.actions.includes("approve") && (
        <ApprovalActions tenantId={tenantId} candidate={candidate} canDecide={canDecide} />
      )}
      {d.actions.includes("promote") &&
        (canDecide ? (
          <PromoteButton
            pending={promote.isPending}
            onPromote={() => promote.mutate({ tenantId, candidateId: candidate.id })}
          />
        ) : (
          <p className="text-sm">Only an approver can promote.</p>
        ))}
      {reruns.length > 0 &&
        (canRerun ? (
          <div data-testid="decision-action-rerun" className="flex w-full flex-col gap-1">
            {reruns.map((o) => (
              <RerunCheck key={o.checkId} tenantId={tenantId} candidateId={candidate.id} option={o} />
            ))}
          </div>
        ) : (
          <p className="text-sm">A member can rerun {reruns.map((o) => o.checkId).join(", ")}.</p>
        ))}
      {d.actions.includes("retry_tasks") && (
        // The Tasks, their attempts and the Retry buttons live on the Change page.
        <a
          data-testid="decision-action-retry_tasks"
          className="text-sm underline"
          href={`/projects/${candidate.projectId}/changes/${candidate.changeId}`}
        >
          Retry its Tasks on the Change page
        </a>
      )}
      <PromoteOutcome result={promote.data} error={promote.error?.message ?? null} />
    </div>
  );
}
