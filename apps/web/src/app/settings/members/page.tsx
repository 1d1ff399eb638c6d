import type { Metadata } from "next";
import { Members } from "../../../components/members.tsx";
import { PageHeader } from "../../../components/page-header.tsx";
import { shellNotice } from "../../../components/shell-notice.tsx";
import { loadShell } from "../../../server/shell.ts";

export const metadata: Metadata = { title: "Members · Rhumbatron" };
export const dynamic = "force-dynamic";

export default async function MembersPage() {
  const shell = await loadShell();
  const notice = shellNotice(shell, "admin", "/settings/members");
  if (notice || shell.kind !== "ready") return notice;
  return (
    <section className="space-y-6">
      <PageHeader title="Members">
        Who may work in {shell.tenant.name}, and with which role. {shell.tenant.name} always keeps at least one admin:
        make someone else admin before you step down or leave.
      </PageHeader>
      <Members tenantId={shell.tenant.tenantId} currentUserId={shell.caller.userId} />
    </section>
  );
}
