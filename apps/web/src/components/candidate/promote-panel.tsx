"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";
import { Panel } from "../query-state.tsx";
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

/** Promotion: every block is listed when it is refused, and the outcome is always shown. */
/** Why the Promote button is not offered, by decision state, in words that match the header above. */
const NOT_PROMOTABLE_BECAUSE: Partial<Record<CandidateDetail["decision"]["state"], string>> = {
  verifying: "its checks are still running",
  ready_to_approve: "it waits for a person to approve this exact tree (Approval, below)",
  blocked: "promotion would be refused now (the reasons are in the decision above)",
  rejected: "it was rejected (the decision above says why and how to go on)",
  stale: "its base is no longer the canonical generation",
  cancelled: "it was cancelled with its Change",
};

export function PromotePanel({
  tenantId,
  candidate,
  canPromote,
}: {
  tenantId: string;
  candidate: CandidateDetail;
  canPromote: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const promote = useMutation(
    trpc.candidate.promote.mutationOptions({
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.candidate.get.queryKey() }),
    }),
  );
  const result = promote.data;
  // Offered only in the state that allows it (the API refuses the rest with its reason).
  const offered = candidate.decision.actions.includes("promote");
  return (
    <Panel title="Promotion" testId="candidate-promotion">
      {candidate.promotion && (
        <p data-testid="promotion-record" className="mb-2 text-sm">
          Promoted as generation <span className="font-mono">S{candidate.promotion.generation}</span> by{" "}
          {candidate.promotion.byName}, {candidate.promotion.at.toLocaleString()}.
        </p>
      )}
      {!offered && !candidate.promotion && !result && (
        <p data-testid="promote-not-offered" className="text-sm text-slate-600">
          Not promotable now: {NOT_PROMOTABLE_BECAUSE[candidate.decision.state] ?? candidate.decision.headline}
        </p>
      )}
      {!offered ? null : canPromote ? (
        <button
          type="button"
          data-testid="promote-button"
          disabled={promote.isPending}
          onClick={() => promote.mutate({ tenantId, candidateId: candidate.id })}
          className="rounded bg-slate-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50"
        >
          {promote.isPending ? "Promoting…" : "Promote"}
        </button>
      ) : (
        <p className="text-sm text-slate-600">Only an approver can promote.</p>
      )}
      {result && (
        <div className="mt-3 space-y-2">
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
      {promote.isError && (
        <p data-testid="promote-error" role="alert" className="mt-2 text-sm text-red-800">
          {promote.error.message}
        </p>
      )}
    </Panel>
  );
}
