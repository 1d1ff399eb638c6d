import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Test support only: the Node.js versions a project's checks are tried on (README.md, Test it). A
 * project's checks run on the worker's Node, and users run 20 and 24, so tests that run the
 * template's real checks run them on both: the Node running the tests for its own major, and the
 * official binary of the other one, which the npm registry carries as `node-<platform>-<arch>`.
 * It is fetched with the npm a newcomer already used for `npm install`, once, into
 * `.data/toolchains`, so no test needs anything the README does not ask for.
 */
export const TESTED_NODES = { 20: "20.20.2", 24: "24.22.3" } as const;
export type TestedMajor = keyof typeof TESTED_NODES;

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const TOOLCHAINS = join(ROOT, ".data", "toolchains");

export interface TestedNode {
  major: TestedMajor;
  /** The folder holding the `node` binary, for a Sandbox's toolchain paths. */
  binDir: string;
  /** What `node --version` printed. */
  version: string;
}

/** The Node of `major`: this process's own when it is that major, otherwise the pinned binary. */
export function testedNode(major: TestedMajor): TestedNode {
  if (Number(process.versions.node.split(".")[0]) === major) {
    return { major, binDir: join(process.execPath, ".."), version: process.version };
  }
  const pkg = `node-${process.platform}-${process.arch}`;
  const version = TESTED_NODES[major];
  const dir = join(TOOLCHAINS, `${pkg}-${version}`);
  const binDir = join(dir, "bin");
  if (!existsSync(join(binDir, "node"))) {
    mkdirSync(TOOLCHAINS, { recursive: true });
    // Unpacked beside its final place and renamed into it: two test processes fetching at once
    // never see half a binary, and the second rename finding the folder there is harmless.
    const tmp = mkdtempSync(join(TOOLCHAINS, ".fetch-"));
    try {
      const tgz = execFileSync("npm", ["pack", `${pkg}@${version}`, "--silent", "--pack-destination", tmp], {
        cwd: tmp,
        encoding: "utf8",
      }).trim();
      execFileSync("tar", ["xzf", join(tmp, tgz.split("\n").at(-1) ?? ""), "-C", tmp]);
      try {
        renameSync(join(tmp, "package"), dir);
      } catch (err) {
        if (!existsSync(join(binDir, "node"))) throw err;
      }
    } catch (err) {
      throw new Error(
        `could not fetch Node ${version} (npm package ${pkg}@${version}) for the checks' Node ${major} run: ${(err as Error).message}`,
      );
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const printed = execFileSync(join(binDir, "node"), ["--version"], { encoding: "utf8" }).trim();
  return { major, binDir, version: printed };
}
