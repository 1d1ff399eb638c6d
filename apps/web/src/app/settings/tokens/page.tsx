import type { Metadata } from "next";
import { ApiTokens } from "../../../components/api-tokens.tsx";
import { PageHeader } from "../../../components/page-header.tsx";
import { shellNotice } from "../../../components/shell-notice.tsx";
import { loadShell } from "../../../server/shell.ts";

export const metadata: Metadata = { title: "API tokens · Rhumbatron" };
export const dynamic = "force-dynamic";

export default async function ApiTokensPage() {
  const shell = await loadShell();
  const notice = shellNotice(shell, "viewer", "/settings/tokens");
  if (notice || shell.kind !== "ready") return notice;
  return (
    <section className="space-y-6">
      <PageHeader title="API tokens">
        A token calls the API (<code className="font-mono">Authorization: Bearer rbt_…</code>) as you, in{" "}
        {shell.tenant.name} only, with at most the role you give it and never more than your own.
      </PageHeader>
      <ApiTokens tenantId={shell.tenant.tenantId} role={shell.tenant.role} />
    </section>
  );
}
