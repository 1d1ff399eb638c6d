import { hasAtLeast } from "@rhumbatron/api/roles";
import { QUEUE_PURPOSES } from "@rhumbatron/core";
import { AgentProgramsPanel } from "../../components/operations/agent-programs-panel.tsx";
import { DeadLettersPanel } from "../../components/operations/dead-letters-panel.tsx";
import { HealthPanel } from "../../components/operations/health-panel.tsx";
import { OutboxPanel } from "../../components/operations/outbox-panel.tsx";
import { MetersPanel, QueuesPanel, StreamLagPanel } from "../../components/operations/system-panels.tsx";
import { PageHeader } from "../../components/page-header.tsx";
import { SandboxPanel } from "../../components/sandbox-notice.tsx";
import { shellNotice } from "../../components/shell-notice.tsx";
import { measureHealth } from "../../server/measure-health.ts";
import { loadShell } from "../../server/shell.ts";

export const dynamic = "force-dynamic";

/** What operators watch and act on (operator role and above; every procedure checks it again). */
export default async function OperationsPage() {
  const shell = await loadShell();
  const notice = shellNotice(shell, "operator");
  if (notice || shell.kind !== "ready") return notice;
  const tenantId = shell.tenant.tenantId;
  const health = await measureHealth();
  return (
    <section className="space-y-4">
      <PageHeader title="Operations" />
      <HealthPanel report={health} />
      <AgentProgramsPanel worker={health.worker} />
      <DeadLettersPanel tenantId={tenantId} />
      <OutboxPanel tenantId={tenantId} />
      <QueuesPanel tenantId={tenantId} purposes={QUEUE_PURPOSES} />
      <StreamLagPanel tenantId={tenantId} />
      <MetersPanel tenantId={tenantId} canSetBudget={hasAtLeast(shell.tenant.role, "admin")} />
      <SandboxPanel />
    </section>
  );
}
