-- Context Packets (what an Agent run or a conflict review was given to read, each item with a stable
-- ID findings cite) and conflict reviews with their findings (docs/verification.md, Conflict
-- reviews). One review
-- per Candidate and (review, n) unique, so a retried workflow step writes nothing twice.

-- CreateTable
CREATE TABLE "context_packets" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "run_id" TEXT,
    "candidate_id" TEXT,
    "tree" TEXT,
    "index_source" TEXT NOT NULL,
    "note" TEXT,
    "items" JSONB NOT NULL DEFAULT '[]',
    "omitted" JSONB NOT NULL DEFAULT '[]',
    "budget" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "context_packets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "conflict_reviews" (
    "id" TEXT NOT NULL,
    "candidate_id" TEXT NOT NULL,
    "packet_id" TEXT,
    "status" TEXT NOT NULL,
    "model" TEXT,
    "reason" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "conflict_reviews_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "conflict_review_findings" (
    "id" TEXT NOT NULL,
    "review_id" TEXT NOT NULL,
    "candidate_id" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    "severity" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "citations" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "supported" BOOLEAN NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "conflict_review_findings_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "context_packets_run_id_key" ON "context_packets"("run_id");

-- CreateIndex
CREATE INDEX "context_packets_candidate_id_idx" ON "context_packets"("candidate_id");

-- CreateIndex
CREATE UNIQUE INDEX "conflict_reviews_candidate_id_key" ON "conflict_reviews"("candidate_id");

-- CreateIndex
CREATE UNIQUE INDEX "conflict_review_findings_review_id_n_key" ON "conflict_review_findings"("review_id", "n");

-- CreateIndex
CREATE INDEX "conflict_review_findings_candidate_id_idx" ON "conflict_review_findings"("candidate_id");

-- AddForeignKey
ALTER TABLE "conflict_reviews" ADD CONSTRAINT "conflict_reviews_candidate_id_fkey" FOREIGN KEY ("candidate_id") REFERENCES "candidates"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "conflict_review_findings" ADD CONSTRAINT "conflict_review_findings_review_id_fkey" FOREIGN KEY ("review_id") REFERENCES "conflict_reviews"("id") ON DELETE CASCADE ON UPDATE CASCADE;
