-- The first lines of a check's failure (the compiler error, the failing test), picked from its whole
-- output when it was recorded, so the gate names them beside the gap (null: a pass, or older rows).
ALTER TABLE "evidence" ADD COLUMN "output_excerpt" TEXT;
