import { hasAtLeast } from "@rhumbatron/api/roles";
import type { Metadata } from "next";
import { Inbox } from "../../components/notifications/inbox.tsx";
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
      <div>
        <h1 className="text-xl font-semibold">Inbox</h1>
        <p className="mt-1 text-sm text-slate-600">
          What needs you in {shell.tenant.name}: approvals waiting for you, how your Changes ended
          {hasAtLeast(shell.tenant.role, "operator") ? ", and dead letters" : ""}.
        </p>
      </div>
      <Inbox tenantId={shell.tenant.tenantId} />
    </section>
  );
}
