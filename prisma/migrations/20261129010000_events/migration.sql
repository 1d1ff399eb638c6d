-- CreateEnum
CREATE TYPE "OutboxState" AS ENUM ('pending', 'retry_wait', 'published', 'failed');

-- CreateEnum
CREATE TYPE "DeadLetterStatus" AS ENUM ('open', 'retried', 'dismissed');

-- CreateTable
CREATE TABLE "outbox_heads" (
    "project_id" TEXT NOT NULL,
    "last_seq" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "outbox_heads_pkey" PRIMARY KEY ("project_id")
);

-- CreateTable
CREATE TABLE "outbox" (
    "id" BIGSERIAL NOT NULL,
    "event_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "project_seq" BIGINT NOT NULL,
    "stream_index" INTEGER NOT NULL,
    "event_type" TEXT NOT NULL,
    "envelope" JSONB NOT NULL,
    "state" "OutboxState" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMP(3),
    "last_error" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMP(3),

    CONSTRAINT "outbox_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "stream_heads" (
    "stream_index" INTEGER NOT NULL,
    "last_offset" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "stream_heads_pkey" PRIMARY KEY ("stream_index")
);

-- CreateTable
CREATE TABLE "stream_entries" (
    "stream_index" INTEGER NOT NULL,
    "offset" BIGINT NOT NULL,
    "event_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "envelope" JSONB NOT NULL,
    "published_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "stream_entries_pkey" PRIMARY KEY ("stream_index","offset")
);

-- CreateTable
CREATE TABLE "stream_cursors" (
    "subscription" TEXT NOT NULL,
    "stream_index" INTEGER NOT NULL,
    "committed_offset" BIGINT NOT NULL DEFAULT 0,
    "lease_owner" TEXT,
    "leased_until" TIMESTAMP(3),
    "redeliver_at" TIMESTAMP(3),
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stream_cursors_pkey" PRIMARY KEY ("subscription","stream_index")
);

-- CreateTable
CREATE TABLE "processed_events" (
    "consumer" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "processed_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "processed_events_pkey" PRIMARY KEY ("consumer","event_id")
);

-- CreateTable
CREATE TABLE "k2_batch_failures" (
    "consumer" TEXT NOT NULL,
    "batch_key" TEXT NOT NULL,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "first_failed_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_failed_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "k2_batch_failures_pkey" PRIMARY KEY ("consumer","batch_key")
);

-- CreateTable
CREATE TABLE "dead_letters" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "command_id" TEXT,
    "consumer" TEXT NOT NULL,
    "origin_queue" TEXT,
    "project_id" TEXT,
    "reason" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "status" "DeadLetterStatus" NOT NULL DEFAULT 'open',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMP(3),
    "resolved_by" TEXT,
    "resolve_note" TEXT,

    CONSTRAINT "dead_letters_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "project_views" (
    "project_id" TEXT NOT NULL,
    "canonical_generation" INTEGER NOT NULL DEFAULT 0,
    "changes_total" INTEGER NOT NULL DEFAULT 0,
    "tasks_by_state" JSONB NOT NULL DEFAULT '{}',
    "candidates_by_state" JSONB NOT NULL DEFAULT '{}',
    "event_count" INTEGER NOT NULL DEFAULT 0,
    "last_event_id" TEXT,
    "last_event_type" TEXT,
    "last_event_at" TIMESTAMP(3),
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "project_views_pkey" PRIMARY KEY ("project_id")
);

-- CreateTable
CREATE TABLE "project_view_entities" (
    "project_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "entity_id" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,

    CONSTRAINT "project_view_entities_pkey" PRIMARY KEY ("project_id","kind","entity_id")
);

-- CreateTable
CREATE TABLE "project_events" (
    "id" BIGSERIAL NOT NULL,
    "project_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "change_id" TEXT,
    "task_id" TEXT,
    "actor" TEXT NOT NULL,
    "summary" TEXT NOT NULL,
    "occurred_at" TIMESTAMP(3) NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "project_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "metric_points" (
    "id" BIGSERIAL NOT NULL,
    "dataset" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "value" DOUBLE PRECISION NOT NULL DEFAULT 1,
    "occurred_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "metric_points_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "outbox_event_id_key" ON "outbox"("event_id");

-- CreateIndex
CREATE INDEX "outbox_state_project_id_idx" ON "outbox"("state", "project_id");

-- CreateIndex
CREATE UNIQUE INDEX "outbox_project_id_project_seq_key" ON "outbox"("project_id", "project_seq");

-- CreateIndex
CREATE INDEX "stream_entries_published_at_idx" ON "stream_entries"("published_at");

-- CreateIndex
CREATE UNIQUE INDEX "stream_entries_stream_index_event_id_key" ON "stream_entries"("stream_index", "event_id");

-- CreateIndex
CREATE UNIQUE INDEX "dead_letters_command_id_key" ON "dead_letters"("command_id");

-- CreateIndex
CREATE INDEX "dead_letters_status_created_at_idx" ON "dead_letters"("status", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "project_events_event_id_key" ON "project_events"("event_id");

-- CreateIndex
CREATE INDEX "project_events_project_id_id_idx" ON "project_events"("project_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "metric_points_dataset_event_id_key" ON "metric_points"("dataset", "event_id");

-- CreateIndex
CREATE INDEX "metric_points_dataset_name_occurred_at_idx" ON "metric_points"("dataset", "name", "occurred_at");
