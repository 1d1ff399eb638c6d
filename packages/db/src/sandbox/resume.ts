import { type Actor, CHANGE_STATUS_SETS, meterWindow } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { lockResourceRow } from "../events/owners.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { retryTaskIn } from "../work-graph/retry-task.ts";
import type { WorkGraphDeps } from "../work-graph/shared.ts";
import { SANDBOX_COUNTERS } from "./meter.ts";
import { sandboxBudgetOf, sandboxMeterScope } from "./tenant-meter.ts";

/**
 * Tasks the monthly Sandbox budget refused resume by themselves (docs/sandbox.md, the meter):
 * when an admin raises the tenant's budget (setSandboxBudget, same transaction) and when the month
 * turns (the maintenance function). A Task counts as refused by the budget when the Sandbox meter
 * blocked it with cause `sandbox_monthly_seconds` (runs.ts, blockTaskForLimit); one refused for
 * too many open workspaces, or blocked for any other reason, is left for a person to retry.
 * Resuming is retryTask as system `sandbox-budget`: a new attempt with its own wake command, so
 * a Change marked "land when ready" goes on without a click. A resumed Task is pending again, so
 * running this twice resumes nothing twice.
 */
export const SANDBOX_BUDGET_ACTOR: Actor = { kind: "system", id: "sandbox-budget" };
/** The refusal's `limit` when the tenant's monthly seconds ran out (meter.ts). */
export const BUDGET_BLOCK_CAUSE = "sandbox_monthly_seconds";

export interface ResumeBudgetBlockedResult {
  /** The Tasks retried, by Change. */
  resumed: { taskId: string; changeId: string; attempt: number }[];
  /** Budget-blocked Tasks still waiting (the meter had no room). */
  waiting: number;
  /** The meter's room when it decided: budget minus used and reserved, this month. */
  remainingSeconds: number;
}

/** Blocked by the budget, in a Change that can still go on, of an active project of the tenant. */
const budgetBlocked = (tenantId: string) => ({
  state: "blocked" as const,
  blockedLimit: "sandbox_meter",
  blockedCause: BUDGET_BLOCK_CAUSE,
  change: { status: { notIn: [...CHANGE_STATUS_SETS.final] }, project: { tenantId, status: "active" as const } },
});

/** The tenant's room on this month's meter (as sandboxMeter reads it), without locking the meter. */
async function remainingSeconds(ctx: TxContext, tenantId: string, deps: WorkGraphDeps): Promise<number> {
  const scope = sandboxMeterScope(deps.config.env, tenantId);
  const window = meterWindow(deps.now());
  const { reservedSeconds: R, usedSeconds: U } = SANDBOX_COUNTERS;
  const inUse = await ctx.tx.$queryRaw<{ n: number }[]>`
    SELECT COALESCE(SUM(count), 0)::int AS n FROM usage_counters
    WHERE counter IN (${R}, ${U}) AND scope_id = ${scope} AND "window" = ${window}`;
  const budget = await sandboxBudgetOf(ctx.tx, tenantId, deps.config);
  return Math.max(budget.seconds - (inUse[0]?.n ?? 0), 0);
}

/**
 * Retries the tenant's budget-blocked Tasks inside the caller's transaction when this month's meter
 * has room for at least one agent reservation; with less (nothing left, or too little for a run),
 * every one of them would only be refused again, so nothing is resumed. A resumed Task reserves
 * when it runs: should the room run out first, the meter blocks it again and it waits for the next.
 */
export async function resumeBudgetBlockedTasksIn(
  ctx: TxContext,
  tenantId: string,
  deps: WorkGraphDeps,
): Promise<ResumeBudgetBlockedResult> {
  const remaining = await remainingSeconds(ctx, tenantId, deps);
  const picked =
    remaining >= deps.config.sandbox.agentReservationSeconds
      ? await ctx.tx.task.findMany({
          where: budgetBlocked(tenantId),
          // Changes are locked in one order (by ID): two resumes of one tenant never wait on each other in a circle.
          orderBy: [{ changeId: "asc" }, { id: "asc" }],
          select: { id: true, changeId: true },
        })
      : [];
  const resumed: ResumeBudgetBlockedResult["resumed"] = [];
  for (const t of picked) {
    await lockResourceRow(ctx, `change:${t.changeId}`);
    // Decided again under the Change's lock: a person (or another resume) may have retried it meanwhile.
    const still = await ctx.tx.task.count({ where: { id: t.id, ...budgetBlocked(tenantId) } });
    if (!still) continue;
    const r = await retryTaskIn(ctx, { tenantId, taskId: t.id, actor: SANDBOX_BUDGET_ACTOR }, deps);
    resumed.push({ ...r, changeId: t.changeId });
  }
  const waiting = await ctx.tx.task.count({ where: budgetBlocked(tenantId) });
  return { resumed, waiting, remainingSeconds: remaining };
}

/** resumeBudgetBlockedTasksIn in a transaction of its own. */
export async function resumeBudgetBlockedTasks(
  db: Db,
  tenantId: string,
  deps: WorkGraphDeps,
): Promise<ResumeBudgetBlockedResult> {
  return withTransaction(db, (ctx) => resumeBudgetBlockedTasksIn(ctx, tenantId, deps));
}

/** The tenants that have budget-blocked Tasks in Changes that can still go on: one query. */
export async function tenantsWithBudgetBlockedTasks(db: Db): Promise<string[]> {
  const rows = await db.$queryRaw<{ tenant_id: string }[]>`
    SELECT DISTINCT p.tenant_id
    FROM tasks t JOIN changes c ON c.id = t.change_id JOIN projects p ON p.id = c.project_id
    WHERE t.state = 'blocked' AND t.blocked_limit = 'sandbox_meter' AND t.blocked_cause = ${BUDGET_BLOCK_CAUSE}
      AND c.status NOT IN ('promoted', 'cancelled') AND p.status = 'active'
    ORDER BY p.tenant_id`;
  return rows.map((r) => r.tenant_id);
}

export interface ResumeEverywhereResult {
  tenants: number;
  resumed: number;
  waiting: number;
  /** Tenants whose resume failed (the others still ran); the next tick tries them again. */
  failed: { tenantId: string; error: string }[];
}

/**
 * The maintenance step: for every tenant with budget-blocked Tasks, resumes them when the meter
 * (this month's, so a new month starts with the whole budget) has room. One transaction per tenant.
 */
export async function resumeBudgetBlockedTasksEverywhere(db: Db, deps: WorkGraphDeps): Promise<ResumeEverywhereResult> {
  const tenants = await tenantsWithBudgetBlockedTasks(db);
  const out: ResumeEverywhereResult = { tenants: tenants.length, resumed: 0, waiting: 0, failed: [] };
  for (const tenantId of tenants) {
    try {
      const r = await resumeBudgetBlockedTasks(db, tenantId, deps);
      out.resumed += r.resumed.length;
      out.waiting += r.waiting;
    } catch (err) {
      out.failed.push({ tenantId, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return out;
}
