-- A project made empty to receive a `git push` (docs/repositories.md, Pushing into an empty project) waits in
-- awaiting_push until a push with its one-time token arrives.
ALTER TYPE "ProjectStatus" ADD VALUE 'awaiting_push';

-- The one push token of a waiting project: only its SHA-256 is kept; issuing a new one replaces it.
-- The push that spends it records where the received repository waits for project.provision.
CREATE TABLE "push_tokens" (
    "project_id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "spent_at" TIMESTAMP(3),
    "quarantine" TEXT,
    CONSTRAINT "push_tokens_pkey" PRIMARY KEY ("project_id")
);

CREATE UNIQUE INDEX "push_tokens_token_hash_key" ON "push_tokens"("token_hash");

ALTER TABLE "push_tokens" ADD CONSTRAINT "push_tokens_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
