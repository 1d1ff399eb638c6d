"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";
import type { CandidateDetail } from "./types.ts";

type RerunOption = CandidateDetail["rerunOptions"][number];

/**
 * Rerun one check of a rejected Candidate, from the decision header. Offered only when the server's
 * rule allows it now (the decision lists the check as rerunnable).
 */
export function RerunCheck({
  tenantId,
  candidateId,
  option,
}: {
  tenantId: string;
  candidateId: string;
  option: RerunOption;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const rerun = useMutation(
    trpc.candidate.rerunCheck.mutationOptions({
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.candidate.get.queryKey() }),
    }),
  );
  return (
    <span className="inline-flex flex-wrap items-center gap-2 text-xs">
      <button
        type="button"
        data-testid={`rerun-${option.checkId}`}
        disabled={rerun.isPending}
        onClick={() => rerun.mutate({ tenantId, candidateId, checkId: option.checkId })}
        className="rounded border border-slate-300 bg-white px-2 py-1 font-medium text-slate-800 hover:bg-slate-50 disabled:opacity-50"
      >
        {rerun.isPending ? `Starting the rerun of ${option.checkId}…` : `Rerun ${option.checkId}`}
      </button>
      <span className="opacity-80">
        {option.limit - option.used} of {option.limit} reruns left; the new Evidence is listed beside the old
      </span>
      {rerun.error && (
        <span role="alert" data-testid={`rerun-error-${option.checkId}`} className="text-red-700">
          {rerun.error.message}
        </span>
      )}
    </span>
  );
}

/** Under a failing check that cannot be rerun now: why (no reruns left, the Candidate moved on…). */
export function RerunRefusal({ option, failing }: { option: RerunOption | null; failing: boolean }) {
  if (!option || option.refusal === null || !failing) return null;
  return (
    <p data-testid={`rerun-unavailable-${option.checkId}`} className="mt-1 text-xs opacity-80">
      Rerun not available: {option.refusal}
    </p>
  );
}
