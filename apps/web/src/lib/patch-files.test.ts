import { describe, expect, it } from "vitest";
import { filePath, fileStats, parsePatch } from "./patch-files.ts";

// The layout the worker writes (apps/worker/src/source/patch.ts): git headers, jsdiff hunks.
const PATCH = `diff --git a/src/cart.js b/src/cart.js
--- a/src/cart.js
+++ b/src/cart.js
@@ -1,3 +1,4 @@
 export function total(items) {
-  return items.length;
+  const sum = items.reduce((s, i) => s + i.price, 0);
+  return sum;
 }
diff --git a/src/wishlist.js b/src/wishlist.js
new file mode 100644
--- /dev/null
+++ b/src/wishlist.js
@@ -0,0 +1,1 @@
+export const wishlist = [];
`;

describe("parsePatch", () => {
  it("reads every file of a composed patch with its hunks and line counts", () => {
    const parsed = parsePatch(PATCH);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.files.map((f) => [filePath(f), f.type, fileStats(f)])).toEqual([
      ["src/cart.js", "modify", { added: 2, removed: 1 }],
      ["src/wishlist.js", "add", { added: 1, removed: 0 }],
    ]);
  });

  it("gives no files for an empty patch", () => {
    expect(parsePatch("  \n")).toEqual({ ok: true, files: [] });
  });
});
