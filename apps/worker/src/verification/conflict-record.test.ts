import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sourceKeys } from "@rhumbatron/core";
import { localFolderBlobStore } from "@rhumbatron/db";
import { describe, expect, it } from "vitest";
import { repairNote } from "./conflict-record.ts";

/** The note a conflict repair's Agent reads, from what the composition kept (the whole path: landing.test.ts). */
describe("repairNote", () => {
  const blobs = localFolderBlobStore(mkdtempSync(join(tmpdir(), "rh-conflict-")));
  const key = sourceKeys.candidateConflict("proj_1", "cand_1");
  const kept = {
    generation: 3,
    conflicts: [
      { taskKey: "a", path: "src/x.ts", kind: "content", base: "x = 1\n", landed: "x = 2\n", yours: "x = 3\n" },
      { taskKey: "b", path: "src/y.ts", kind: "delete_edit", base: "y\n", landed: null, yours: "y2\n" },
    ],
  };

  it("tells a Task its own conflicts: each file with its base, what landed and its own version", async () => {
    await blobs.put(key, new TextEncoder().encode(JSON.stringify(kept)), { contentType: "application/json" });
    const a = await repairNote(blobs, { projectId: "proj_1", candidateId: "cand_1", taskKey: "a" });
    expect(a).toContain("(generation 3)");
    expect(a).toContain(
      "src/x.ts: both changed the same lines\n--- base (what the Task started from) ---\nx = 1\n\n--- landed (in this checkout now) ---\nx = 2\n\n--- the Task's own last version ---\nx = 3\n",
    );
    expect(a).not.toContain("src/y.ts");
    const b = await repairNote(blobs, { projectId: "proj_1", candidateId: "cand_1", taskKey: "b" });
    expect(b).toContain("src/y.ts: one deleted what another changed");
    expect(b).toContain("--- landed (in this checkout now) ---\n(no such file)");
  });

  it("says nothing for a Task with no conflict kept, a Candidate with none, or a record that does not read", async () => {
    expect(await repairNote(blobs, { projectId: "proj_1", candidateId: "cand_1", taskKey: "c" })).toBeNull();
    expect(await repairNote(blobs, { projectId: "proj_1", candidateId: "cand_none", taskKey: "a" })).toBeNull();
    await blobs.put(sourceKeys.candidateConflict("proj_1", "cand_bad"), new TextEncoder().encode("{not json"), {
      contentType: "application/json",
    });
    expect(await repairNote(blobs, { projectId: "proj_1", candidateId: "cand_bad", taskKey: "a" })).toBeNull();
  });
});
