import { ChangeView } from "../../../../../components/change/change-view.tsx";
import { shellNotice } from "../../../../../components/shell-notice.tsx";
import { loadShell } from "../../../../../server/shell.ts";

// Per-request data (the caller and their tenant): never prerendered.
export const dynamic = "force-dynamic";

/** A Change: its Work Graph live, its Agents and runs, its ChangeSets' diffs and its Candidates. */
export default async function ChangePage({ params }: { params: Promise<{ projectId: string; changeId: string }> }) {
  const { projectId, changeId } = await params;
  const shell = await loadShell();
  const notice = shellNotice(shell, "viewer");
  if (notice || shell.kind !== "ready") return notice;
  return <ChangeView tenantId={shell.tenant.tenantId} projectId={projectId} changeId={changeId} />;
}
