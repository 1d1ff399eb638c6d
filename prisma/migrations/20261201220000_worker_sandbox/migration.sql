-- AlterTable
ALTER TABLE "worker_heartbeats" ADD COLUMN     "sandbox_isolates" BOOLEAN,
ADD COLUMN     "sandbox_kind" TEXT,
ADD COLUMN     "sandbox_note" TEXT;
