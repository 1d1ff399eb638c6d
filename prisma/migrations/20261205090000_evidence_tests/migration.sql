-- Each test's outcome from a check's test report (JUnit XML or TAP, apps/worker/src/verification/reports.ts):
-- id, file, name, suite, status, duration and failure message, failing tests first. Null: the check
-- names no report, or the row is older than this column.
ALTER TABLE "evidence" ADD COLUMN "tests" JSONB;
