-- Which Agent works a Task: the project's default and a Task's own (core agents/choice.ts).
ALTER TABLE "projects" ADD COLUMN "agent" JSONB;
ALTER TABLE "tasks" ADD COLUMN "agent" JSONB;
