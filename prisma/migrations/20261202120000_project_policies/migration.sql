-- CreateTable
CREATE TABLE "project_policies" (
    "project_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "document" JSONB NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "project_policies_pkey" PRIMARY KEY ("project_id","version")
);

-- AddForeignKey
ALTER TABLE "project_policies" ADD CONSTRAINT "project_policies_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
