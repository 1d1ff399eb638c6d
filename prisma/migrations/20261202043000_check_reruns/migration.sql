-- Reruns of one check of a Candidate (docs/landing.md, "Rerun a check"). The n-th rerun of a
-- check has the stable ID rerun_<candidate>_<check>_<n>; (candidate, check, n) is unique, so two
-- requests racing for the same rerun cannot both create it.
CREATE TABLE "check_reruns" (
    "id" TEXT NOT NULL,
    "candidate_id" TEXT NOT NULL,
    "check_id" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    "requested_by" TEXT NOT NULL,
    "requested_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMP(3),
    "outcome" TEXT,
    CONSTRAINT "check_reruns_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "check_reruns_candidate_id_check_id_n_key" ON "check_reruns"("candidate_id", "check_id", "n");

ALTER TABLE "check_reruns" ADD CONSTRAINT "check_reruns_candidate_id_fkey" FOREIGN KEY ("candidate_id") REFERENCES "candidates"("id") ON DELETE CASCADE ON UPDATE CASCADE;
