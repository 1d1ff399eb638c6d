import { z } from "zod";
import type { RhumbatronConfig } from "../config.ts";

/**
 * A tenant's monthly Sandbox budget (docs/sandbox.md, the meter). The meter counts per tenant
 * and UTC month; the budget it is checked against is, first to last: the tenant's own (an admin
 * sets it, tenant_sandbox_budgets), the deployment's (RHUMBATRON_SANDBOX_MONTHLY_SECONDS), the
 * config default (`config.sandbox.monthlySeconds`, 18,000 s).
 */
export type SandboxBudgetSource = "tenant" | "setting" | "default";

export interface SandboxBudget {
  seconds: number;
  source: SandboxBudgetSource;
}

/**
 * The largest budget anyone may set: ten workspaces busy every second of a 31-day month. A bigger
 * number is far more likely a typo (an extra zero) than a plan.
 */
export const SANDBOX_BUDGET_MAX_SECONDS = 10 * 31 * 24 * 60 * 60;

/** One schema for the admin's value (tRPC, SDK) and the deployment's (the environment variable). */
export const sandboxBudgetSecondsSchema = z
  .number({ error: "must be a whole number of seconds" })
  .int("must be a whole number of seconds")
  .min(1, "must be at least 1 second")
  .max(SANDBOX_BUDGET_MAX_SECONDS, `must be at most ${SANDBOX_BUDGET_MAX_SECONDS} seconds (10 workspaces for 31 days)`);

export function resolveSandboxBudget(
  tenantSeconds: number | null,
  config: Pick<RhumbatronConfig, "sandbox">,
): SandboxBudget {
  if (tenantSeconds !== null) return { seconds: tenantSeconds, source: "tenant" };
  const setting = config.sandbox.deploymentMonthlySeconds;
  if (setting !== null) return { seconds: setting, source: "setting" };
  return { seconds: config.sandbox.monthlySeconds, source: "default" };
}

export function describeBudgetSource(source: SandboxBudgetSource): string {
  switch (source) {
    case "tenant":
      return "the tenant's own budget";
    case "setting":
      return "the deployment's RHUMBATRON_SANDBOX_MONTHLY_SECONDS";
    case "default":
      return "the default budget";
  }
}

/** The three ways to raise a budget, for every message that refuses for lack of one. */
export const RAISE_SANDBOX_BUDGET =
  "To raise it, a tenant admin sets a higher monthly budget on the Operations page (/operations, Meters) " +
  "or runs `rhumbatron sandbox budget --set <seconds>`; for every tenant without its own budget, set " +
  "RHUMBATRON_SANDBOX_MONTHLY_SECONDS on the deployment. The meter starts again at 0 on the 1st of the month (UTC).";

/**
 * What happens to a Task an agent reservation refusal blocked (packages/db sandbox/resume.ts): it
 * is retried by itself once the meter has room again, so nobody has to come back and retry it.
 */
export const BUDGET_BLOCKED_TASK_RESUMES =
  "The blocked Task resumes by itself once the budget is raised or the month turns; it needs no retry by hand.";
