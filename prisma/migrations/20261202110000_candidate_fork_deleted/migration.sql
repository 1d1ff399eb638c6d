-- The fork sweep records each Candidate fork it deleted, so its next page starts after them.

-- AlterTable
ALTER TABLE "candidates" ADD COLUMN "fork_deleted_at" TIMESTAMP(3);
