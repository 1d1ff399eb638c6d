import { ProjectOverview } from "../../../components/project/project-overview.tsx";
import { shellNotice } from "../../../components/shell-notice.tsx";
import { loadShell } from "../../../server/shell.ts";

// Per-request data (the caller and their tenant): never prerendered.
export const dynamic = "force-dynamic";

/** A project's overview: generations, counts, clone access, Changes, Candidates, releases, code search and the live feed. */
export default async function ProjectPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const shell = await loadShell();
  const notice = shellNotice(shell, "viewer");
  if (notice || shell.kind !== "ready") return notice;
  return <ProjectOverview tenantId={shell.tenant.tenantId} projectId={projectId} role={shell.tenant.role} />;
}
