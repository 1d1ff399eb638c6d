import type { Metadata } from "next";
import { AccountForm } from "../../../components/account-form.tsx";
import { PageHeader } from "../../../components/page-header.tsx";
import { shellNotice } from "../../../components/shell-notice.tsx";
import { loadShell } from "../../../server/shell.ts";

export const metadata: Metadata = { title: "Account · Rhumbatron" };
export const dynamic = "force-dynamic";

/** Your own account, whatever your role, and also when you belong to no tenant (yet, or any more). */
export default async function AccountPage() {
  const shell = await loadShell();
  if (shell.kind !== "ready" && shell.kind !== "no-tenant") return shellNotice(shell, "viewer", "/settings/account");
  return (
    <section className="space-y-6">
      <PageHeader title="Account">
        Signed in as {shell.caller.name} ({shell.caller.email}).
      </PageHeader>
      <AccountForm />
    </section>
  );
}
