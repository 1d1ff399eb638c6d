"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";
import type { CandidateDetail } from "./types.ts";

type RerunOption = CandidateDetail["rerunOptions"][number];

/**
 * Rerun one check of a rejected Candidate. Offered only when the server's rule allows it now; for a
 * failing check that cannot be rerun the row says why (no reruns left, the Candidate moved on…).
 */
export function RerunCheck({
  tenantId,
  candidateId,
  option,
  failing,
}: {
  tenantId: string;
  candidateId: string;
  option: RerunOption | null;
  /** The gate's verdict for this check is an error or a failure. */
  failing: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const rerun = useMutation(
    trpc.candidate.rerunCheck.mutationOptions({
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.candidate.get.queryKey() }),
    }),
  );
  if (!option) return null;
  if (option.refusal !== null) {
    if (!failing) return null;
    return (
      <p data-testid={`rerun-unavailable-${option.checkId}`} className="mt-1 text-xs opacity-80">
        Rerun not available: {option.refusal}
      </p>
    );
  }
  return (
    <div className="mt-2 flex flex-wrap items-center gap-2 text-xs">
      <button
        type="button"
        data-testid={`rerun-${option.checkId}`}
        disabled={rerun.isPending}
        onClick={() => rerun.mutate({ tenantId, candidateId, checkId: option.checkId })}
        className="rounded border border-slate-300 bg-white px-2 py-1 font-medium text-slate-800 hover:bg-slate-50 disabled:opacity-50"
      >
        {rerun.isPending ? "Starting the rerun…" : "Rerun this check"}
      </button>
      <span className="opacity-80">
        {option.limit - option.used} of {option.limit} reruns left; the new Evidence is listed beside the old
      </span>
      {rerun.error && (
        <span role="alert" data-testid={`rerun-error-${option.checkId}`} className="text-red-700">
          {rerun.error.message}
        </span>
      )}
    </div>
  );
}
