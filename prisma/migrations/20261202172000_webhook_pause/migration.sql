-- Pausing a webhook (docs/notifications.md): a paused hook gets no new deliveries, and
-- Events from before its latest resume are never sent to it.
ALTER TABLE "webhooks" ADD COLUMN "paused" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "webhooks" ADD COLUMN "resumed_at" TIMESTAMP(3);
