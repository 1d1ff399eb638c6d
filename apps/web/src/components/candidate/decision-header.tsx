import type { Tone } from "../../lib/candidate-view.ts";
import { TONE_CLASSES } from "../../lib/candidate-view.ts";
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

const ACTION_LABELS: Record<CandidateDetail["decision"]["actions"][number], { label: string; anchor: string }> = {
  approve: { label: "Approve or reject below", anchor: "#candidate-approval" },
  reject: { label: "", anchor: "#candidate-approval" },
  promote: { label: "Promote below", anchor: "#candidate-promotion" },
  rerun: { label: "Rerun a check below", anchor: "#candidate-checks" },
  // The Change page holds the Retry buttons (the href is the Change's, set below).
  retry_tasks: { label: "Retry its Tasks on the Change page", anchor: "" },
};

/**
 * The decision first: can it be approved, what is it waiting for, what blocks it (each gap and
 * block with its rule), or how it ended. The panels below it hold the details and the only actions
 * this state allows.
 */
export function DecisionHeader({ candidate }: { candidate: CandidateDetail }) {
  const d = candidate.decision;
  const actions = d.actions.filter((a) => ACTION_LABELS[a].label !== "");
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
      {d.reasons.length > 0 && (
        <ul data-testid="decision-reasons" className="mt-1 list-disc space-y-0.5 pl-5 text-sm">
          {d.reasons.map((r) => (
            <li key={r} data-testid="decision-reason">
              {r}
            </li>
          ))}
        </ul>
      )}
      {actions.length > 0 && (
        <p data-testid="decision-actions" className="mt-2 flex flex-wrap gap-3 text-sm">
          {actions.map((a) => (
            <a
              key={a}
              data-testid={`decision-action-${a}`}
              className="underline"
              href={a === "retry_tasks" ? `../changes/${candidate.changeId}` : ACTION_LABELS[a].anchor}
            >
              {ACTION_LABELS[a].label}
            </a>
          ))}
        </p>
      )}
    </section>
  );
}
