-- A project's landing queue as an admin set it: running, paused or draining, and since when.
ALTER TABLE "projects" ADD COLUMN "landing_queue" TEXT NOT NULL DEFAULT 'running';
ALTER TABLE "projects" ADD COLUMN "landing_queue_since" TIMESTAMP(3);
