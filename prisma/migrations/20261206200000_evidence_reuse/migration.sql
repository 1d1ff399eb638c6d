-- Reused Evidence (docs/checks-file.md, Reused Evidence): the sha256 of a check's inputs (composed
-- tree, planned
-- check, setup, toolchain, checks file), and for a record that reuses an earlier pass, that pass's ID.
ALTER TABLE "evidence" ADD COLUMN "inputs_key" TEXT;
ALTER TABLE "evidence" ADD COLUMN "reused_from" TEXT;
CREATE INDEX "evidence_inputs_key_idx" ON "evidence"("inputs_key");
