-- Attempts side by side (docs/attempts.md): a Task's attempts, each run's and ChangeSet's and
-- Candidate's attempt, the lines a ChangeSet changes, and the attempt a Change went on with.
ALTER TABLE "tasks" ADD COLUMN "attempts" JSONB;
ALTER TABLE "changes" ADD COLUMN "picked_attempt" INTEGER;
ALTER TABLE "agent_runs" ADD COLUMN "alternative" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "agent_runs" ADD COLUMN "agent" JSONB;
ALTER TABLE "changesets" ADD COLUMN "alternative" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "changesets" ADD COLUMN "changed_lines" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "candidates" ADD COLUMN "alternative" INTEGER NOT NULL DEFAULT 1;
