import { hasAtLeast } from "@rhumbatron/api/roles";
import { CandidateView } from "../../../../../components/candidate/candidate-page.tsx";
import { shellNotice } from "../../../../../components/shell-notice.tsx";
import { serverQuery } from "../../../../../server/server-query.ts";
import { loadShell } from "../../../../../server/shell.ts";

export const dynamic = "force-dynamic";

export default async function CandidatePage({
  params,
}: {
  params: Promise<{ projectId: string; candidateId: string }>;
}) {
  const { projectId, candidateId } = await params;
  const shell = await loadShell();
  const notice = shellNotice(shell, "viewer");
  if (notice || shell.kind !== "ready") return notice;
  const tenantId = shell.tenant.tenantId;
  // Rendered with its data on the server: an approver sees the decision on first paint.
  const initial = await serverQuery((api) => api.candidate.get({ tenantId, candidateId }));
  return (
    <CandidateView
      initial={initial}
      tenantId={tenantId}
      projectId={projectId}
      candidateId={candidateId}
      // The buttons show for approvers and above; the procedures check the role again on every call.
      canDecide={hasAtLeast(shell.tenant.role, "approver")}
      canRerun={hasAtLeast(shell.tenant.role, "member")}
    />
  );
}
