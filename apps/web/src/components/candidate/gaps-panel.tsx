import { gapStyle, TONE_CLASSES, type Tone, unrecordedCheck } from "../../lib/candidate-view.ts";
import { Empty, Panel } from "../query-state.tsx";
import { Badge } from "./badges.tsx";
import type { CandidateDetail } from "./types.ts";

/** What the gate's verdict is for this Candidate now, in one badge that never says more than the state. */
function Verdict({ candidate, failing, running }: { candidate: CandidateDetail; failing: number; running: number }) {
  const gate = candidate.gate;
  if (!gate)
    return (
      <Badge tone="neutral" testId="gate-promotable">
        gate not computed
      </Badge>
    );
  if (candidate.status === "stale")
    return (
      <Badge tone="warn" testId="gate-promotable">
        stale: its base is no longer canonical
      </Badge>
    );
  if (candidate.status === "cancelled")
    return (
      <Badge tone="neutral" testId="gate-promotable">
        cancelled
      </Badge>
    );
  if (failing > 0)
    return (
      <Badge tone="fail" testId="gate-promotable">
        {failing} gap{failing === 1 ? "" : "s"}
      </Badge>
    );
  if (running > 0)
    return (
      <Badge tone="pending" testId="gate-promotable">
        {running} check{running === 1 ? "" : "s"} still running
      </Badge>
    );
  // No gap: what that means depends on the decision, and the badge never says more than it.
  const settled = SATISFIED[candidate.decision.state];
  if (!gate.promotable || !settled)
    return (
      <Badge tone="fail" testId="gate-promotable">
        not promotable
      </Badge>
    );
  return (
    <Badge tone={settled.tone} testId="gate-promotable">
      {settled.text}
    </Badge>
  );
}

/** The badge of a gate with no gap, by decision state (only a Candidate ready to promote is "promotable"). */
const SATISFIED: Partial<Record<CandidateDetail["decision"]["state"], { tone: Tone; text: string }>> = {
  verifying: { tone: "pending", text: "no gap so far" },
  ready_to_promote: { tone: "pass", text: "promotable" },
  ready_to_approve: { tone: "pending", text: "checks satisfied · waits for approval" },
  blocked: { tone: "fail", text: "checks satisfied · promotion blocked" },
  rejected: { tone: "fail", text: "no gap · rejected: the decision says why" },
  promoted: { tone: "pass", text: "checks satisfied · promoted" },
};

/**
 * Every gap the gate lists, by kind. Promotion is refused while there is one. While the checks
 * run, a check with no Evidence yet is running, not missing: it is shown as such, not as a gap.
 */
export function GapsPanel({ candidate }: { candidate: CandidateDetail }) {
  const gate = candidate.gate;
  // A check with no Evidence is running while the Candidate verifies, stopped once it went stale
  // or was cancelled: shown as such, never as a missing gap.
  const unrecorded = unrecordedCheck(candidate.status);
  const running = unrecorded ? candidate.gaps.filter((g) => (g.gap ?? "missing") === "missing") : [];
  const failing = candidate.gaps.filter((g) => !running.includes(g));
  const verdict = (
    <Verdict
      candidate={candidate}
      failing={failing.length}
      running={unrecorded?.kind === "running" ? running.length : 0}
    />
  );
  return (
    <Panel title="Gate" testId="candidate-gaps" actions={verdict}>
      {!gate ? (
        <Empty testId="candidate-gaps-empty">No plan yet, so the gate has nothing to judge.</Empty>
      ) : candidate.gaps.length === 0 ? (
        <p data-testid="candidate-gaps-none" className="text-sm text-slate-600">
          No gaps: every required check has a satisfying Evidence record.
        </p>
      ) : (
        <ul className="space-y-2">
          {unrecorded &&
            running.map((g) => (
              <li
                key={`${unrecorded.kind}:${g.checkId}`}
                data-testid={`gap-${g.checkId}`}
                data-gap-kind={unrecorded.kind}
                className={`rounded border p-2 text-sm ${TONE_CLASSES[unrecorded.tone]}`}
              >
                <span className="font-mono font-medium">{g.checkId}</span>:{" "}
                <strong className="capitalize">{unrecorded.label}</strong> — {unrecorded.meaning}
              </li>
            ))}
          {failing.map((g) => {
            const style = gapStyle(g.gap ?? "missing");
            return (
              <li
                // One check has one gap; the conflict review may have several (one per blocking finding).
                key={`${g.checkId}:${g.evidenceId ?? ""}`}
                data-testid={`gap-${g.checkId}`}
                data-gap-kind={g.gap ?? "missing"}
                className={`rounded border p-2 text-sm ${TONE_CLASSES[style.tone]}`}
              >
                <span className="font-mono font-medium">{g.checkId}</span>: <strong>{style.label}</strong> —{" "}
                {style.meaning} <span className="opacity-80">({g.detail})</span>
                {/* The failure's first lines (the compiler error, the failing test), without scrolling to the log. */}
                {g.excerpt?.length ? (
                  <pre
                    data-testid={`gap-excerpt-${g.checkId}`}
                    className="mt-1 overflow-x-auto whitespace-pre rounded bg-white/70 p-2 font-mono text-xs text-slate-800"
                  >
                    {g.excerpt.join("\n")}
                  </pre>
                ) : null}
              </li>
            );
          })}
        </ul>
      )}
      <QuarantinedTests quarantined={gate?.quarantined ?? []} />
    </Panel>
  );
}

/** Quarantined tests that failed here and were let through: the gate names each (docs/flaky-tests.md). */
function QuarantinedTests({ quarantined }: { quarantined: { checkId: string; testId: string; name: string }[] }) {
  if (quarantined.length === 0) return null;
  return (
    <div data-testid="gate-quarantined" className="mt-3 rounded border border-amber-300 bg-amber-50 p-2 text-sm">
      <p className="font-medium text-amber-900">Quarantined tests that failed and did not block:</p>
      <ul className="mt-1 list-disc pl-5">
        {quarantined.map((q) => (
          <li key={`${q.checkId}:${q.testId}`} data-testid="gate-quarantined-test">
            <span className="font-mono">{q.checkId}</span> › {q.name}
          </li>
        ))}
      </ul>
    </div>
  );
}
