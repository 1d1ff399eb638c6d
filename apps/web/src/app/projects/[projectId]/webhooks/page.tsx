import type { Metadata } from "next";
import { ProjectSubpage } from "../../../../components/page-header.tsx";
import { WebhookForm } from "../../../../components/project/webhooks/webhook-form.tsx";
import { WebhookList } from "../../../../components/project/webhooks/webhook-list.tsx";
import { shellNotice } from "../../../../components/shell-notice.tsx";
import { loadShell } from "../../../../server/shell.ts";

export const metadata: Metadata = { title: "Webhooks · Rhumbatron" };
export const dynamic = "force-dynamic";

/**
 * A project's outgoing webhooks (admins): subscribe a URL, edit, pause or resume a hook, read each
 * hook's delivery log, redeliver.
 */
export default async function WebhooksPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const shell = await loadShell();
  const notice = shellNotice(shell, "admin", `/projects/${projectId}/webhooks`);
  if (notice || shell.kind !== "ready") return notice;
  const tenantId = shell.tenant.tenantId;
  return (
    <ProjectSubpage
      projectId={projectId}
      title="Webhooks"
      description={
        <>
          Each Event of a subscribed type is POSTed to the URL as JSON, signed with the hook's secret, and retried with
          backoff when the receiver does not answer 2xx. Edit changes a hook's URL or Event types for the next Event; a
          paused hook gets no new deliveries, and Events that happen while it is paused are not sent after Resume.
        </>
      }
    >
      <WebhookForm tenantId={tenantId} projectId={projectId} />
      <WebhookList tenantId={tenantId} projectId={projectId} />
    </ProjectSubpage>
  );
}
