-- CreateTable
CREATE TABLE "candidates" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "change_id" TEXT NOT NULL,
    "composition_key" TEXT NOT NULL,
    "base_generation" INTEGER NOT NULL,
    "base_commit" TEXT NOT NULL,
    "changeset_ids" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "status" TEXT NOT NULL DEFAULT 'created',
    "composed_commit" TEXT,
    "composed_tree" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "candidates_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "candidates_composition_key_key" ON "candidates"("composition_key");

-- CreateIndex
CREATE INDEX "candidates_project_id_status_idx" ON "candidates"("project_id", "status");

-- CreateIndex
CREATE INDEX "candidates_change_id_idx" ON "candidates"("change_id");
