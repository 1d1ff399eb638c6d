-- AlterTable
ALTER TABLE "projects" ADD COLUMN "release_target" JSONB NOT NULL DEFAULT '{"kind":"folder"}';

-- AlterTable
ALTER TABLE "candidates" ADD COLUMN "plan" JSONB,
ADD COLUMN "gate" JSONB,
ADD COLUMN "approval_required" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "rejection_reason" TEXT,
ADD COLUMN "browser_runs" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "promoted_generation" INTEGER;

-- AlterTable
ALTER TABLE "workflow_instances" ADD COLUMN "leased_until" TIMESTAMP(3),
ADD COLUMN "attempts" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "workflow_steps" (
    "instance_id" TEXT NOT NULL,
    "step" TEXT NOT NULL,
    "output" JSONB,
    "completed_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workflow_steps_pkey" PRIMARY KEY ("instance_id","step")
);

-- CreateTable
CREATE TABLE "evidence" (
    "id" TEXT NOT NULL,
    "candidate_id" TEXT NOT NULL,
    "check_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "coverage" TEXT NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "timeout_seconds" INTEGER NOT NULL,
    "metrics" JSONB NOT NULL DEFAULT '{}',
    "output_key" TEXT,
    "attachments" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "detail" TEXT NOT NULL DEFAULT '',
    "completed_at" TIMESTAMP(3) NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "evidence_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "approvals" (
    "candidate_id" TEXT NOT NULL,
    "decision" TEXT NOT NULL,
    "tree_hash" TEXT NOT NULL,
    "decided_by" TEXT NOT NULL,
    "note" TEXT,
    "decided_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "approvals_pkey" PRIMARY KEY ("candidate_id")
);

-- CreateTable
CREATE TABLE "releases" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "generation" INTEGER NOT NULL,
    "candidate_id" TEXT,
    "commit" TEXT NOT NULL,
    "tree" TEXT NOT NULL,
    "target" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "steps" JSONB NOT NULL DEFAULT '[]',
    "output" JSONB,
    "error" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "releases_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "project_indexes" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "generation" INTEGER NOT NULL,
    "tree" TEXT,
    "status" TEXT NOT NULL,
    "files" INTEGER NOT NULL DEFAULT 0,
    "index_key" TEXT,
    "error" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "project_indexes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "evidence_candidate_id_check_id_idx" ON "evidence"("candidate_id", "check_id");

-- CreateIndex
CREATE INDEX "releases_project_id_generation_idx" ON "releases"("project_id", "generation");

-- CreateIndex
CREATE INDEX "project_indexes_project_id_created_at_idx" ON "project_indexes"("project_id", "created_at");

-- AddForeignKey
ALTER TABLE "workflow_steps" ADD CONSTRAINT "workflow_steps_instance_id_fkey" FOREIGN KEY ("instance_id") REFERENCES "workflow_instances"("instance_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "evidence" ADD CONSTRAINT "evidence_candidate_id_fkey" FOREIGN KEY ("candidate_id") REFERENCES "candidates"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_candidate_id_fkey" FOREIGN KEY ("candidate_id") REFERENCES "candidates"("id") ON DELETE CASCADE ON UPDATE CASCADE;
