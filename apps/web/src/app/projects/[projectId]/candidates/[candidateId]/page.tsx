import { hasAtLeast } from "@rhumbatron/api/roles";
import { CandidateView } from "../../../../../components/candidate/candidate-page.tsx";
import { shellNotice } from "../../../../../components/shell-notice.tsx";
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
  return (
    <CandidateView
      tenantId={shell.tenant.tenantId}
      projectId={projectId}
      candidateId={candidateId}
      // The buttons show for approvers and above; the procedures check the role again on every call.
      canDecide={hasAtLeast(shell.tenant.role, "approver")}
      canRerun={hasAtLeast(shell.tenant.role, "member")}
    />
  );
}
