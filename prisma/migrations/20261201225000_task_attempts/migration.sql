-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "attempt" INTEGER NOT NULL DEFAULT 1;
