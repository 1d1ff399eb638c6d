import { hasAtLeast } from "@rhumbatron/api/roles";
import type { Metadata } from "next";
import { Inbox } from "../../components/notifications/inbox.tsx";
import { PageHeader } from "../../components/page-header.tsx";
import { shellNotice } from "../../components/shell-notice.tsx";
import { loadShell } from "../../server/shell.ts";

export const metadata: Metadata = { title: "Inbox · Rhumbatron" };
export const dynamic = "force-dynamic";

/** The signed-in person's notifications in the tenant they work in. */
export default async function InboxPage() {
  const shell = await loadShell();
  const notice = shellNotice(shell, "viewer", "/inbox");
  if (notice || shell.kind !== "ready") return notice;
  return (
    <section className="space-y-4">
      <PageHeader title="Inbox">
        What needs you in {shell.tenant.name}: approvals waiting for you, how your Changes ended
        {hasAtLeast(shell.tenant.role, "operator") ? ", and dead letters" : ""}.
      </PageHeader>
      <Inbox tenantId={shell.tenant.tenantId} />
    </section>
  );
}
