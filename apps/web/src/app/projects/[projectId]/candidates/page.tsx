import { CandidateList } from "../../../../components/candidate/candidate-list.tsx";
import { ProjectSubpage } from "../../../../components/page-header.tsx";
import { shellNotice } from "../../../../components/shell-notice.tsx";
import { loadShell } from "../../../../server/shell.ts";

export const dynamic = "force-dynamic";

export default async function CandidatesPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const shell = await loadShell();
  const notice = shellNotice(shell, "viewer");
  if (notice || shell.kind !== "ready") return notice;
  return (
    <ProjectSubpage projectId={projectId} title="Candidates">
      <CandidateList tenantId={shell.tenant.tenantId} projectId={projectId} />
    </ProjectSubpage>
  );
}
