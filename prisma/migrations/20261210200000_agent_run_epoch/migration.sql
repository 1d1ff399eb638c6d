-- An Agent run's claim count (packages/db/src/work-graph/run-fence.ts): each claim of the run starts
-- a new epoch, and a runner whose run another runner took over records nothing more for it.
ALTER TABLE "agent_runs" ADD COLUMN "runner_epoch" INTEGER NOT NULL DEFAULT 0;
