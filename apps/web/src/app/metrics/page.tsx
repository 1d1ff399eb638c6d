import { MetricsView } from "../../components/metrics/metrics-view.tsx";
import { PageHeader } from "../../components/page-header.tsx";
import { shellNotice } from "../../components/shell-notice.tsx";
import { loadShell } from "../../server/shell.ts";

export const dynamic = "force-dynamic";

export default async function MetricsPage() {
  const shell = await loadShell();
  const notice = shellNotice(shell, "viewer");
  if (notice || shell.kind !== "ready") return notice;
  return (
    <section className="space-y-4">
      <PageHeader title="Metrics" />
      <MetricsView tenantId={shell.tenant.tenantId} />
    </section>
  );
}
