import { DomainError, type RhumbatronConfig, resolveSandboxBudget, type SandboxBudget } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import type { Tx } from "../transaction.ts";

// Whose monthly Sandbox meter a reservation counts on. The meter is per tenant (a project belongs
// to one tenant; docs/sandbox.md, the meter), kept in usage_counters under `<env>:<tenant>`.

/** Where a tenant's monthly meter counts in usage_counters (scope_id of the seconds counters). */
export function sandboxMeterScope(env: string, tenantId: string): string {
  return `${env}:${tenantId}`;
}

/** Whose meter a reservation counts on, and what it is for (sandbox_charges). */
export interface MeterOwner {
  tenantId: string;
  projectId: string | null;
  changeId: string | null;
}

/**
 * The tenant (and project and Change) a reservation is for: `tenantId` when the caller names it,
 * else found from its Change, else from its owner's ID (`sbxres_<run>` or `sbxres_<candidate>`, the
 * IDs the runner and the verification workflow give their reservations).
 */
export async function meterOwner(
  tx: Tx,
  input: { tenantId?: string | undefined; changeId?: string | null | undefined; id?: string | undefined },
): Promise<MeterOwner> {
  const changeId = input.changeId ?? null;
  const ownerId = input.id?.startsWith("sbxres_") ? input.id.slice("sbxres_".length) : null;
  const rows =
    changeId || ownerId
      ? await tx.$queryRaw<{ tenant_id: string; project_id: string; change_id: string }[]>`
          SELECT tenant_id, project_id, change_id FROM (
            SELECT p.tenant_id, p.id AS project_id, c.id AS change_id, 1 AS rank
            FROM changes c JOIN projects p ON p.id = c.project_id WHERE c.id = ${changeId}
            UNION ALL
            SELECT p.tenant_id, p.id, k.change_id, 2
            FROM candidates k JOIN projects p ON p.id = k.project_id WHERE k.id = ${ownerId}
            UNION ALL
            SELECT p.tenant_id, p.id, r.change_id, 3
            FROM agent_runs r JOIN changes c ON c.id = r.change_id JOIN projects p ON p.id = c.project_id
            WHERE r.id = ${ownerId}
          ) o ORDER BY rank LIMIT 1`
      : [];
  const found = rows[0];
  const tenantId = input.tenantId ?? found?.tenant_id;
  if (!tenantId) {
    throw new DomainError(
      "INVALID_INPUT",
      "a Sandbox reservation must name its tenant: pass tenantId, a Change, or an owner ID sbxres_<run or candidate>",
    );
  }
  if (found && found.tenant_id !== tenantId) {
    throw new DomainError("INVALID_INPUT", `the reservation's Change belongs to another tenant than ${tenantId}`);
  }
  return { tenantId, projectId: found?.project_id ?? null, changeId: found?.change_id ?? changeId };
}

/** The tenant's budget: its own row, else the deployment's setting, else the config default. */
export async function sandboxBudgetOf(
  tx: Tx | Db,
  tenantId: string,
  config: Pick<RhumbatronConfig, "sandbox">,
): Promise<SandboxBudget> {
  const rows = await tx.$queryRaw<{ monthly_seconds: number }[]>`
    SELECT monthly_seconds FROM tenant_sandbox_budgets WHERE tenant_id = ${tenantId}`;
  return resolveSandboxBudget(rows[0]?.monthly_seconds ?? null, config);
}
