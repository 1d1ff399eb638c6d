import { hasAtLeast } from "@rhumbatron/api/roles";
import { ProjectSubpage } from "../../../../components/page-header.tsx";
import { ProjectPolicy } from "../../../../components/project/project-policy.tsx";
import { shellNotice } from "../../../../components/shell-notice.tsx";
import { loadShell } from "../../../../server/shell.ts";

export const dynamic = "force-dynamic";

/** A project's verification policy: the active version, its history, and the editor for admins. */
export default async function PolicyPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const shell = await loadShell();
  const notice = shellNotice(shell, "viewer");
  if (notice || shell.kind !== "ready") return notice;
  return (
    <ProjectSubpage projectId={projectId} title="Verification policy">
      <ProjectPolicy
        tenantId={shell.tenant.tenantId}
        projectId={projectId}
        canEdit={hasAtLeast(shell.tenant.role, "admin")}
      />
    </ProjectSubpage>
  );
}
