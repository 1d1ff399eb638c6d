-- Sign-in attempts in Postgres instead of each web process's memory (docs/sign-in.md): every web
-- process counts the same attempts, and a restart does not reset a lock.
CREATE TABLE "sign_in_attempts" (
    "id" BIGSERIAL NOT NULL,
    "scope" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "sign_in_attempts_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "sign_in_attempts_scope_key_at_idx" ON "sign_in_attempts"("scope", "key", "at");
