-- AlterTable
ALTER TABLE "projects" ADD COLUMN     "command_allowlist" TEXT[] DEFAULT ARRAY[]::TEXT[];
