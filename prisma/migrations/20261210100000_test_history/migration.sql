-- Test history (docs/flaky-tests.md): each test's outcome per Evidence record, over the check's
-- attempts on one tree, and each test's health in its project with its quarantine.
CREATE TABLE "test_results" (
    "evidence_id" TEXT NOT NULL,
    "test_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "check_id" TEXT NOT NULL,
    "candidate_id" TEXT NOT NULL,
    "tree" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL,
    "failed_attempts" INTEGER NOT NULL,
    "recorded_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "test_results_pkey" PRIMARY KEY ("evidence_id", "test_id")
);
CREATE INDEX "test_results_project_id_check_id_test_id_recorded_at_idx" ON "test_results"("project_id", "check_id", "test_id", "recorded_at");

CREATE TABLE "test_statuses" (
    "project_id" TEXT NOT NULL,
    "check_id" TEXT NOT NULL,
    "test_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "file" TEXT,
    "status" TEXT NOT NULL DEFAULT 'ok',
    "status_since" TIMESTAMP(3) NOT NULL,
    "runs" INTEGER NOT NULL DEFAULT 0,
    "flaky_runs" INTEGER NOT NULL DEFAULT 0,
    "failed_runs" INTEGER NOT NULL DEFAULT 0,
    "consecutive_passes" INTEGER NOT NULL DEFAULT 0,
    "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
    "delayed" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "delayed_count" INTEGER NOT NULL DEFAULT 0,
    "last_run_at" TIMESTAMP(3) NOT NULL,
    "quarantined_at" TIMESTAMP(3),
    "quarantine_owner" TEXT,
    "quarantine_reason" TEXT,
    "quarantine_expires_at" TIMESTAMP(3),
    "quarantine_auto" BOOLEAN NOT NULL DEFAULT false,
    CONSTRAINT "test_statuses_pkey" PRIMARY KEY ("project_id", "check_id", "test_id")
);
CREATE INDEX "test_statuses_project_id_status_idx" ON "test_statuses"("project_id", "status");

-- The Task whose ChangeSet first breaks a failing check, found by composing prefixes (docs/flaky-tests.md).
ALTER TABLE "candidates" ADD COLUMN "culprit" JSONB;
