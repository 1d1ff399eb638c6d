-- The coding-agent programs a worker has (health, operations page), and a program Agent's transcript.
ALTER TABLE "worker_heartbeats" ADD COLUMN "agent_programs" JSONB;
ALTER TABLE "agent_runs" ADD COLUMN "transcript" JSONB;
