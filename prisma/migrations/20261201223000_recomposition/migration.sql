-- AlterTable
ALTER TABLE "candidates" ADD COLUMN     "recompose_reason" TEXT,
ADD COLUMN     "recomposed_from" TEXT;
