import { Notice } from "../components/notice.tsx";
import { ProjectList } from "../components/project-list.tsx";
import { loadShell } from "../server/shell.ts";

// Per-request data (the caller and their tenant): never prerendered.
export const dynamic = "force-dynamic";

export default async function HomePage() {
  const shell = await loadShell();
  switch (shell.kind) {
    case "unavailable":
      return (
        <Notice title="Database unavailable" tone="error">
          The server cannot reach its database. See{" "}
          <a className="underline" href="/api/health">
            /api/health
          </a>
          .
        </Notice>
      );
    case "signed-out":
      // Until sign-in exists the caller is the local user RHUMBATRON_LOCAL_USER_EMAIL (see resolveCaller).
      return (
        <Notice title="No signed-in user">
          The local user named by RHUMBATRON_LOCAL_USER_EMAIL does not exist in this database. Seed the demo data or set
          the variable to an existing user.
        </Notice>
      );
    case "no-tenant":
      return <Notice title="No tenant yet">You are not a member of any tenant yet.</Notice>;
    case "ready":
      return (
        <section>
          <h1 className="mb-4 text-xl font-semibold">Projects</h1>
          <ProjectList tenantId={shell.tenant.tenantId} />
        </section>
      );
  }
}
