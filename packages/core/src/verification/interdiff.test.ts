import { describe, expect, it } from "vitest";
import { compareOwnDiffs, ownDiffLines } from "./interdiff.ts";

const patch = (path: string, at: number, lines: string[], context = "ctx") =>
  [
    `diff --git a/${path} b/${path}`,
    "index 1111111..2222222 100644",
    `--- a/${path}`,
    `+++ b/${path}`,
    `@@ -${at},3 +${at},4 @@ ${context}`,
    ` ${context}`,
    ...lines,
  ].join("\n");

describe("the Change's own diff across a recomposition", () => {
  it("is unchanged when the same lines are added and removed, wherever the hunks moved", () => {
    const before = patch("src/a.ts", 3, ["-old", "+new"]);
    const after = patch("src/a.ts", 40, ["-old", "+new"], "other context");
    expect(compareOwnDiffs(before, after)).toEqual({ unchanged: true, differingFiles: [] });
  });

  it("lists files whose added or removed lines differ, and files only one diff touches", () => {
    const before = [patch("src/a.ts", 3, ["-old", "+new"]), patch("src/b.ts", 1, ["+b"])].join("\n");
    const after = [patch("src/a.ts", 3, ["-old", "+newer"]), patch("src/c.ts", 1, ["+c"])].join("\n");
    expect(compareOwnDiffs(before, after)).toEqual({
      unchanged: false,
      differingFiles: ["src/a.ts", "src/b.ts", "src/c.ts"],
    });
  });

  it("keeps file creation and deletion, and leaves out the ---/+++ headers", () => {
    const created = ["diff --git a/x b/x", "new file mode 100644", "--- /dev/null", "+++ b/x", "@@ -0,0 +1 @@", "+x"];
    expect(ownDiffLines(created.join("\n")).get("x")).toEqual(["new file mode 100644", "+x"]);
    expect(compareOwnDiffs("", "").unchanged).toBe(true);
  });
});
