import { fixtureInput, sandboxBudgetSecondsSchema } from "@rhumbatron/core";
import { formatIssues, RhumbatronError } from "../errors.ts";
import type { ClientBase } from "./base.ts";
import type { FixtureDraft, FixturePublishResult, SandboxBudgetResult, SandboxMeter } from "./types.ts";

/** A fix by hand and the Sandbox meter. */
export function tenantMethods({ trpc, call, tenantId }: ClientBase) {
  return {
    /**
     * Publishes a fix by hand as the Task's ChangeSet (docs/agents.md, Publishing a fix by hand): whole text
     * files and deletions. Checked here with the server's own schema first: a bad path, a file given
     * twice or more than 512 KB throws BAD_REQUEST and sends nothing. The worker commits the files
     * and completes the Task; the same fix again is the same command (`duplicate: true`).
     */
    async publishFixture(taskId: string, fixture: FixtureDraft): Promise<FixturePublishResult> {
      const parsed = fixtureInput.safeParse(fixture);
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
        throw new RhumbatronError(
          "BAD_REQUEST",
          `the fix is not valid: ${formatIssues(issues)}; fix it and try again (nothing was sent)`,
          { issues },
        );
      }
      const t = await tenantId();
      return call(() => trpc.task.publishFixture.mutate({ tenantId: t, taskId, ...parsed.data }));
    },

    /** The tenant's Sandbox meter this month: used, reserved, the budget and its source, what used it. */
    async sandboxMeter(): Promise<SandboxMeter> {
      const t = await tenantId();
      return call(() => trpc.sandbox.meter.query({ tenantId: t }));
    },

    /**
     * Sets the tenant's monthly Sandbox budget in seconds (admin role). Checked here with the
     * server's own schema first: anything but a whole number from 1 to the maximum throws
     * BAD_REQUEST and sends nothing. A value below this month's use is allowed (`belowUsage`, `note`).
     */
    async setSandboxBudget(monthlySeconds: number): Promise<SandboxBudgetResult> {
      const parsed = sandboxBudgetSecondsSchema.safeParse(monthlySeconds);
      if (!parsed.success) {
        throw new RhumbatronError(
          "BAD_REQUEST",
          `the budget ${parsed.error.issues[0]?.message ?? "is invalid"}, got ${monthlySeconds} (nothing was sent)`,
          { issues: parsed.error.issues.map((i) => ({ path: "monthlySeconds", message: i.message })) },
        );
      }
      const t = await tenantId();
      return call(() => trpc.sandbox.setBudget.mutate({ tenantId: t, monthlySeconds: parsed.data }));
    },
  };
}
