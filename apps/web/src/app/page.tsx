import { hasAtLeast } from "@rhumbatron/api/roles";
import { CreateProjectForm } from "../components/create-project-form.tsx";
import { ProjectList } from "../components/project-list.tsx";
import { shellNotice } from "../components/shell-notice.tsx";
import { loadShell } from "../server/shell.ts";

// Per-request data (the caller and their tenant): never prerendered.
export const dynamic = "force-dynamic";

export default async function HomePage() {
  const shell = await loadShell();
  const notice = shellNotice(shell);
  if (notice || shell.kind !== "ready") return notice;
  // Only admins manage projects; the procedures refuse everyone else too.
  const canManage = hasAtLeast(shell.tenant.role, "admin");
  return (
    <section>
      <h1 className="mb-4 text-xl font-semibold">Projects</h1>
      {canManage && <CreateProjectForm tenantId={shell.tenant.tenantId} />}
      <ProjectList tenantId={shell.tenant.tenantId} canManage={canManage} />
    </section>
  );
}
