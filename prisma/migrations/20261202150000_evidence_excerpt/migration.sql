-- What a reader of a failed check needs without opening the whole log: the command that ran and
-- the last lines of its output (null for a pass, and for records written before this column).
ALTER TABLE "evidence" ADD COLUMN "command" TEXT;
ALTER TABLE "evidence" ADD COLUMN "output_tail" TEXT;
