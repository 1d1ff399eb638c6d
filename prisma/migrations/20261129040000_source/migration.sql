-- AlterTable
ALTER TABLE "agent_runs" ADD COLUMN     "error" TEXT,
ADD COLUMN     "fork" TEXT,
ADD COLUMN     "fork_deleted_at" TIMESTAMP(3),
ADD COLUMN     "start_commit" TEXT;

-- CreateTable
CREATE TABLE "repo_tokens" (
    "id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "repo" TEXT NOT NULL,
    "mode" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "revoked_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "repo_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "canonical_generations" (
    "project_id" TEXT NOT NULL,
    "generation" INTEGER NOT NULL,
    "commit" TEXT NOT NULL,
    "tree" TEXT NOT NULL,
    "candidate_id" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "canonical_generations_pkey" PRIMARY KEY ("project_id","generation")
);

-- CreateTable
CREATE TABLE "changesets" (
    "id" TEXT NOT NULL,
    "change_id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "fork" TEXT NOT NULL,
    "base_commit" TEXT NOT NULL,
    "commit" TEXT NOT NULL,
    "paths" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "patch_ref" TEXT,
    "patch_bytes" INTEGER NOT NULL DEFAULT 0,
    "patch_truncated" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "changesets_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "repo_tokens_token_hash_key" ON "repo_tokens"("token_hash");

-- CreateIndex
CREATE INDEX "repo_tokens_repo_idx" ON "repo_tokens"("repo");

-- CreateIndex
CREATE UNIQUE INDEX "changesets_run_id_key" ON "changesets"("run_id");

-- CreateIndex
CREATE INDEX "changesets_change_id_idx" ON "changesets"("change_id");

-- CreateIndex
CREATE INDEX "changesets_task_id_idx" ON "changesets"("task_id");
