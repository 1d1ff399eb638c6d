-- The credentials of one import's http(s) source, sealed with a key derived from the server's auth
-- secret (docs/repositories.md). Deleted by the transaction that activates or fails the
-- project, and when the project is archived.
CREATE TABLE "import_credentials" (
    "project_id" TEXT NOT NULL,
    "sealed" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "import_credentials_pkey" PRIMARY KEY ("project_id")
);

ALTER TABLE "import_credentials" ADD CONSTRAINT "import_credentials_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
