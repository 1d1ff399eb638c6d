"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";
import { Panel } from "../query-state.tsx";
import { Time } from "../time.tsx";
import { Badge } from "./badges.tsx";
import type { CandidateDetail, PromoteResult } from "./types.ts";

function outcomeText(r: PromoteResult): string {
  switch (r.outcome) {
    case "promoted":
      return `Promoted: canonical is now generation S${r.generation}.`;
    case "alreadyPromoted":
      return `Already promoted (generation S${r.generation}).`;
    case "stale":
      return `Stale: canonical moved on to S${r.canonicalGeneration}; compose a new Candidate.`;
    case "blocked":
      return `Blocked by ${r.blocks.length} precondition${r.blocks.length === 1 ? "" : "s"}.`;
  }
}

const OUTCOME_TONE = { promoted: "pass", alreadyPromoted: "neutral", stale: "warn", blocked: "fail" } as const;

/** Why there is no Promote button, by decision state, in words that match the decision at the top. */
const NOT_PROMOTABLE_BECAUSE: Partial<Record<CandidateDetail["decision"]["state"], string>> = {
  verifying: "its checks are still running",
  ready_to_approve: "it waits for a person to approve this exact tree (at the top of the page)",
  blocked: "promotion would be refused now (the reasons are in the decision at the top)",
  rejected: "it was rejected (the decision at the top says why and how to go on)",
  stale: "its base is no longer the canonical generation",
  cancelled: "it was cancelled with its Change",
};

/** The promotion's record, or why the Candidate is not promoted (the button is in the decision header). */
export function PromotePanel({ candidate }: { candidate: CandidateDetail }) {
  const offered = candidate.decision.actions.includes("promote");
  const queued = candidate.decision.state === "ready_to_promote" && !offered;
  return (
    <Panel title="Promotion" testId="candidate-promotion">
      {candidate.promotion ? (
        <p data-testid="promotion-record" className="text-sm">
          Promoted as generation <span className="font-mono">S{candidate.promotion.generation}</span> by{" "}
          {candidate.promotion.byName}, <Time value={candidate.promotion.at} />.
        </p>
      ) : offered ? (
        <p className="text-sm text-slate-600">Ready: promote it at the top of the page.</p>
      ) : (
        <p data-testid="promote-not-offered" className="text-sm text-slate-600">
          Not promoted yet:{" "}
          {queued
            ? "the landing queue promotes it in its turn (its Change lands when ready)"
            : (NOT_PROMOTABLE_BECAUSE[candidate.decision.state] ?? candidate.decision.headline)}
        </p>
      )}
    </Panel>
  );
}

/** The Promote button and what the last click returned (kept by the header, which outlives the button). */
export function usePromote() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return useMutation(
    trpc.candidate.promote.mutationOptions({
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.candidate.get.queryKey() }),
    }),
  );
}

export function PromoteButton(props: { onPromote: () => void; pending: boolean }) {
  return (
    <button
      type="button"
      data-testid="promote-button"
      disabled={props.pending}
      onClick={props.onPromote}
      className="rounded bg-slate-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50"
    >
      {props.pending ? "Promoting…" : "Promote"}
    </button>
  );
}

export function PromoteOutcome({ result, error }: { result: PromoteResult | undefined; error: string | null }) {
  return (
    <>
      {result && (
        <div className="space-y-1">
          <p data-testid="promote-outcome" data-outcome={result.outcome} className="text-sm">
            <Badge tone={OUTCOME_TONE[result.outcome]}>{result.outcome}</Badge> {outcomeText(result)}
          </p>
          {result.outcome === "blocked" && (
            <ul data-testid="promote-blocks" className="list-disc space-y-1 pl-5 text-sm text-red-800">
              {result.blocks.map((b) => (
                <li key={b} data-testid="promote-block">
                  {b}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      {error && (
        <p data-testid="promote-error" role="alert" className="text-sm text-red-800">
          {error}
        </p>
      )}
    </>
  );
}
