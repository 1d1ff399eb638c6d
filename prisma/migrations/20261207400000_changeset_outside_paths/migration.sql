-- A command or program Agent's edits outside its Task's declared paths (a gate gap unless allowed).
ALTER TABLE "changesets" ADD COLUMN "outside_paths" TEXT[] DEFAULT ARRAY[]::TEXT[];
