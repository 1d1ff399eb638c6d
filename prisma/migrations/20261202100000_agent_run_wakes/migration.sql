-- A woken Agent run carries its wake (what caused it and which paths overlap) and says what it did
-- with it (continued, or stopped and why).

-- AlterTable
ALTER TABLE "agent_runs" ADD COLUMN "wake" JSONB,
ADD COLUMN "note" TEXT;
