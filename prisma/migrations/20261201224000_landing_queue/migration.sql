-- AlterTable
ALTER TABLE "changes" ADD COLUMN     "land_when_ready" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "landing_since" TIMESTAMP(3);
