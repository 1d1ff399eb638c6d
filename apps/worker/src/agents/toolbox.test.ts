import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_COMMAND_ALLOWLIST, type SandboxCommand } from "@rhumbatron/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FileListing, workspaceTools } from "./toolbox.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rh-toolbox-"));
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src/app.ts"), "export const x = 1;\n");
  writeFileSync(join(dir, "src/stacked.ts"), "export const s = 1;\n");
  // What a command left behind: in the folder, in no index.
  writeFileSync(join(dir, "build.log"), "ok\n");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const toolsOver = (listing: FileListing) =>
  workspaceTools(
    {
      path: dir,
      run: async (_: SandboxCommand) => {
        throw new Error("no command runs here");
      },
      remove: async () => {},
    },
    { allowlist: [...DEFAULT_COMMAND_ALLOWLIST], commandTimeoutMs: 1000, listing },
  );

describe("list_files", () => {
  it("answers from the file index, not from the folder", async () => {
    // The index names a file the folder lacks and omits two it has: the index is what is listed.
    const tools = toolsOver({ paths: ["src/app.ts", "src/only-indexed.ts"] });
    expect(await tools.listFiles()).toEqual(["src/app.ts", "src/only-indexed.ts"]);
  });

  it("adds what the stacked ChangeSets and the Agent changed, as the folder has it now", async () => {
    const tools = toolsOver({ paths: ["README.md", "src/app.ts"], overlay: ["src/stacked.ts", "README.md"] });
    // README.md was deleted by a stacked ChangeSet (it is not in the folder); src/stacked.ts was added.
    expect(await tools.listFiles()).toEqual(["src/app.ts", "src/stacked.ts"]);
    await tools.writeFile("src/new/deep.ts", "export {};\n");
    await tools.deleteFile("src/app.ts");
    expect(await tools.listFiles()).toEqual(["src/new/deep.ts", "src/stacked.ts"]);
    // A path written through `./` or `a/../` is listed once, by its plain name.
    await tools.writeFile("./src/new/../app.ts", "export const x = 2;\n");
    expect(await tools.listFiles()).toEqual(["src/app.ts", "src/new/deep.ts", "src/stacked.ts"]);
  });
});
