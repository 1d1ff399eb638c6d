import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { exportToFolder } from "./deliver.ts";

describe("exportToFolder", () => {
  it("writes the tree with git's executable bit and refuses paths that leave the folder", async () => {
    const dest = join(mkdtempSync(join(tmpdir(), "rh-export-")), "S1");
    const body = (f: { path: string }) => Promise.resolve(new TextEncoder().encode(`content of ${f.path}`));
    const r = await exportToFolder(
      dest,
      [
        { path: "bin/run.sh", blob: "a", size: 1, executable: true },
        { path: "src/app.ts", blob: "b", size: 1 },
      ],
      body,
    );
    expect(r).toMatchObject({ path: dest, files: 2 });
    expect(readFileSync(join(dest, "src/app.ts"), "utf8")).toBe("content of src/app.ts");
    expect(statSync(join(dest, "bin/run.sh")).mode & 0o777).toBe(0o755);
    expect(statSync(join(dest, "src/app.ts")).mode & 0o777).toBe(0o644);
    await expect(
      exportToFolder(join(dest, "..", "S2"), [{ path: "../escape", blob: "c", size: 1 }], body),
    ).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
  });
});
