-- AlterTable
ALTER TABLE "changes" ADD COLUMN     "contract_changes" JSONB NOT NULL DEFAULT '{"added":[],"removed":[],"changed":[]}',
ADD COLUMN     "goals" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "invariants" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "status" TEXT NOT NULL DEFAULT 'open';

-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "agent_id" TEXT,
ADD COLUMN     "dispatched" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "edit_plan" JSONB,
ADD COLUMN     "intents" JSONB NOT NULL DEFAULT '{"paths":[],"prefixes":[]}',
ADD COLUMN     "position" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "agent_runs" (
    "id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "change_id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "wake_command_id" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "agent_runs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "agent_runs_wake_command_id_key" ON "agent_runs"("wake_command_id");

-- CreateIndex
CREATE INDEX "agent_runs_change_id_status_idx" ON "agent_runs"("change_id", "status");

-- AddForeignKey
ALTER TABLE "agent_runs" ADD CONSTRAINT "agent_runs_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_runs" ADD CONSTRAINT "agent_runs_change_id_fkey" FOREIGN KEY ("change_id") REFERENCES "changes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
