-- Speculative stacks (docs/landing.md): a Candidate composed on the composed tree of the Candidate
-- below it in its project's landing queue, instead of on canonical.
ALTER TABLE "candidates" ADD COLUMN "stacked_on" TEXT;
CREATE INDEX "candidates_stacked_on_idx" ON "candidates"("stacked_on");
-- A Change whose Candidate waits for a place in the stack: the candidate.create payload to ask again with.
ALTER TABLE "changes" ADD COLUMN "stack_wait" JSONB;
ALTER TABLE "changes" ADD COLUMN "stack_wait_since" TIMESTAMP(3);
