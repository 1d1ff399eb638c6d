import { gapStyle, TONE_CLASSES } from "../../lib/candidate-view.ts";
import { Empty, Panel } from "../query-state.tsx";
import { Badge } from "./badges.tsx";
import type { CandidateDetail } from "./types.ts";

/** Every gap the gate lists, by kind. Promotion is refused while there is one. */
export function GapsPanel({ candidate }: { candidate: CandidateDetail }) {
  const gate = candidate.gate;
  const verdict = !gate ? (
    <Badge tone="neutral" testId="gate-promotable">
      gate not computed
    </Badge>
  ) : gate.promotable ? (
    <Badge tone="pass" testId="gate-promotable">
      promotable
    </Badge>
  ) : (
    <Badge tone="fail" testId="gate-promotable">
      {candidate.gaps.length} gap{candidate.gaps.length === 1 ? "" : "s"}
    </Badge>
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
          {candidate.gaps.map((g) => {
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
              </li>
            );
          })}
        </ul>
      )}
    </Panel>
  );
}
