-- AlterEnum
ALTER TYPE "ProjectStatus" ADD VALUE 'failed';

-- AlterTable
ALTER TABLE "projects" ADD COLUMN     "failure_reason" TEXT,
ADD COLUMN     "source_branch" TEXT,
ADD COLUMN     "source_kind" TEXT NOT NULL DEFAULT 'template',
ADD COLUMN     "source_url" TEXT;
