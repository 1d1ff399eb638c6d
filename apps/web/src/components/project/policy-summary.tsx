"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";
import { NotReady } from "../query-state.tsx";

/** The project overview's line about its policy: the active version and what the riskiest tiers need. */
export function PolicySummary({ tenantId, projectId }: { tenantId: string; projectId: string }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.policy.get.queryOptions({ tenantId, projectId }));
  if (!q.isSuccess) return <NotReady query={q} testId="policy-summary" what="the policy" label="Loading the policy…" />;
  const { policyId, version, implicit, document: d } = q.data;
  return (
    <p data-testid="policy-summary" data-state="ready" data-version={version} className="text-sm text-slate-600">
      <span className="font-mono">
        {policyId} v{version}
      </span>
      {implicit ? " (the defaults)" : ""}: high risk needs {d.requiredChecksByRisk.high.join(", ")}; a person approves{" "}
      {d.humanGateRiskTiers.length ? `${d.humanGateRiskTiers.join(", ")} risk` : "authorization changes only"}.
    </p>
  );
}
