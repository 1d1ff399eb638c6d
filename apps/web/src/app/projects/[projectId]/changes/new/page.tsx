import { NewChangeForm } from "../../../../../components/change/new-change-form.tsx";
import { ProjectCrumb } from "../../../../../components/page-header.tsx";
import { shellNotice } from "../../../../../components/shell-notice.tsx";
import { loadShell } from "../../../../../server/shell.ts";

// Per-request data (the caller and their tenant): never prerendered.
export const dynamic = "force-dynamic";

/** Ask for a Change: its terms and its Work Graph (members and above may). */
export default async function NewChangePage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const shell = await loadShell();
  const notice = shellNotice(shell, "member");
  if (notice || shell.kind !== "ready") return notice;
  return (
    <div className="space-y-2">
      <ProjectCrumb projectId={projectId} here="New Change" />
      <NewChangeForm tenantId={shell.tenant.tenantId} projectId={projectId} />
    </div>
  );
}
