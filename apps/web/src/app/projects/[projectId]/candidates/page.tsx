import { CandidateList } from "../../../../components/candidate/candidate-list.tsx";
import { shellNotice } from "../../../../components/shell-notice.tsx";
import { loadShell } from "../../../../server/shell.ts";

export const dynamic = "force-dynamic";

export default async function CandidatesPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const shell = await loadShell();
  const notice = shellNotice(shell, "viewer");
  if (notice || shell.kind !== "ready") return notice;
  return (
    <section className="space-y-4">
      <p className="text-sm text-slate-500">
        <a className="underline" href={`/projects/${projectId}`}>
          Project
        </a>
      </p>
      <h1 className="text-xl font-semibold">Candidates</h1>
      <CandidateList tenantId={shell.tenant.tenantId} projectId={projectId} />
    </section>
  );
}
