import type { Metadata } from "next";
import { PageHeader } from "../../../components/page-header.tsx";
import { Secrets } from "../../../components/secrets.tsx";
import { shellNotice } from "../../../components/shell-notice.tsx";
import { loadShell } from "../../../server/shell.ts";

export const metadata: Metadata = { title: "Secrets · Rhumbatron" };
export const dynamic = "force-dynamic";

/** Admins only (docs/agents.md, Secrets): everyone else gets the page's "Not allowed" and no form. */
export default async function SecretsPage() {
  const shell = await loadShell();
  const notice = shellNotice(shell, "admin", "/settings/secrets");
  if (notice || shell.kind !== "ready") return notice;
  return (
    <section className="space-y-6">
      <PageHeader title="Secrets">
        API keys of {shell.tenant.name}&apos;s Agent programs, such as Claude Code or Codex, which Agent runs get as
        environment variables. A value is stored encrypted and never shown again.
      </PageHeader>
      <Secrets tenantId={shell.tenant.tenantId} />
    </section>
  );
}
