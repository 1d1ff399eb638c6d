-- Whether an imported project's submodules were fetched (an admin allowed them at import).
ALTER TABLE "projects" ADD COLUMN "source_submodules" BOOLEAN NOT NULL DEFAULT false;
