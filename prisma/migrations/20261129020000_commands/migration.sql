-- CreateTable
CREATE TABLE "queue_messages" (
    "id" BIGSERIAL NOT NULL,
    "queue" TEXT NOT NULL,
    "command_id" TEXT NOT NULL,
    "command_type" TEXT NOT NULL,
    "project_id" TEXT,
    "change_id" TEXT,
    "task_id" TEXT,
    "envelope" JSONB NOT NULL,
    "deliveries" INTEGER NOT NULL DEFAULT 0,
    "available_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease_owner" TEXT,
    "leased_until" TIMESTAMP(3),
    "last_error" TEXT,
    "origin_queue" TEXT,
    "enqueued_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "queue_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "deferred_commands" (
    "command_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "envelope" JSONB NOT NULL,
    "deferred_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "deferred_commands_pkey" PRIMARY KEY ("command_id")
);

-- CreateTable
CREATE TABLE "workflow_instances" (
    "instance_id" TEXT NOT NULL,
    "workflow" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "input" JSONB NOT NULL,
    "output" JSONB,
    "error" TEXT,
    "started_by" TEXT NOT NULL,
    "started_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMP(3),

    CONSTRAINT "workflow_instances_pkey" PRIMARY KEY ("instance_id")
);

-- CreateTable
CREATE TABLE "usage_counters" (
    "counter" TEXT NOT NULL,
    "scope_id" TEXT NOT NULL,
    "window" TEXT NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "usage_counters_pkey" PRIMARY KEY ("counter","scope_id","window")
);

-- CreateIndex
CREATE INDEX "queue_messages_queue_available_at_idx" ON "queue_messages"("queue", "available_at");

-- CreateIndex
CREATE UNIQUE INDEX "queue_messages_queue_command_id_key" ON "queue_messages"("queue", "command_id");

-- CreateIndex
CREATE INDEX "workflow_instances_workflow_status_idx" ON "workflow_instances"("workflow", "status");
