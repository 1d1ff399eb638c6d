-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "blocked_cause" TEXT;

-- CreateIndex
CREATE INDEX "tasks_state_blocked_cause_idx" ON "tasks"("state", "blocked_cause");

-- Tasks the Sandbox meter blocked before the cause was recorded: their blocked run kept the refusal.
UPDATE "tasks" t SET "blocked_cause" = CASE
    WHEN r."error" LIKE '%sandbox monthly meter%' THEN 'sandbox_monthly_seconds'
    WHEN r."error" LIKE '%open-workspace limit%' THEN 'sandbox_open_workspaces'
  END
FROM (
  SELECT DISTINCT ON ("task_id") "task_id", "error" FROM "agent_runs"
  WHERE "status" = 'blocked' ORDER BY "task_id", "updated_at" DESC
) r
WHERE r."task_id" = t."id" AND t."state" = 'blocked' AND t."blocked_limit" = 'sandbox_meter';
