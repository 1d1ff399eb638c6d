-- Named leases (packages/db/src/leases/resource-lease.ts): the source sync holds one instead of a
-- transaction open around its git and blob work.
CREATE TABLE "resource_leases" (
    "name" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "acquired_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "resource_leases_pkey" PRIMARY KEY ("name")
);

-- A Change's priority in its project's landing queue (docs/landing.md, Queue controls).
ALTER TABLE "changes" ADD COLUMN "landing_priority" INTEGER NOT NULL DEFAULT 0;
-- How many times a Change's conflicting Tasks were re-run by themselves (docs/landing.md).
ALTER TABLE "changes" ADD COLUMN "conflict_repairs" INTEGER NOT NULL DEFAULT 0;
