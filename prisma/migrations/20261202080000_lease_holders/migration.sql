-- Who holds a lease, so a lease held by a dead worker can be taken over as soon as its heartbeat
-- stops (worker.takeoverSeconds), not when the lease runs out.

-- AlterTable
ALTER TABLE "worker_heartbeats" ADD COLUMN "stopped_at" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "workflow_instances" ADD COLUMN "lease_owner" TEXT;

-- AlterTable
ALTER TABLE "agent_runs" ADD COLUMN "runner_id" TEXT;

-- CreateIndex
CREATE INDEX "worker_heartbeats_last_beat_at_idx" ON "worker_heartbeats"("last_beat_at");
