import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_COMMAND_ALLOWLIST } from "@rhumbatron/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../testing.ts";
import { bubblewrapAvailable, bubblewrapSandbox, sandboxLimits } from "./index.ts";
import { TSC_MEMO_FILE } from "./tsc-memo.ts";
import type { CopyableWorkspace } from "./workspace.ts";

const TEMPLATE = fileURLToPath(new URL("../../../../templates/shop", import.meta.url));
const typescriptDir = dirname(createRequire(import.meta.url).resolve("typescript/package.json"));
const PROJECT = "proj_6f1c9f8e-0000-4000-8000-0000000000e5";
const T = 120_000;
const TRACE = { RHUMBATRON_TSC_MEMO: "trace" };

let root: string;
let built: CopyableWorkspace;

beforeAll(async () => {
  const probe = await bubblewrapAvailable();
  if (!probe.ok) throw new Error(`bubblewrap cannot run here (${probe.reason}); apt-get install -y bubblewrap`);
  root = await mkdtemp(join(tmpdir(), "rhumbatron-tscmemo-"));
  const sandbox = await bubblewrapSandbox({
    root,
    toolchainPaths: [dirname(process.execPath), typescriptDir],
    allowlist: DEFAULT_COMMAND_ALLOWLIST,
    limits: sandboxLimits(testConfig),
  });
  built = (await sandbox.open({ projectId: PROJECT, dirName: "cand-memo" })) as CopyableWorkspace;
  await cp(TEMPLATE, built.path, { recursive: true, filter: (src) => !/\/(dist|node_modules)$/.test(src) });
  await mkdir(join(built.path, ".git"));
  const build = await built.run({ argv: ["npm", "run", "-s", "build"], env: TRACE, timeoutMs: T });
  expect(build, build.stdout).toMatchObject({ exitCode: 0, stdout: "", stderr: "" });
}, 180_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("the remembering tsc", () => {
  it("does not compile a copy of the built tree again, and the script's own output is unchanged", async () => {
    expect(await readFile(join(built.path, TSC_MEMO_FILE), "utf8")).toMatch(/tsconfig\.json/);
    const copy = await built.copy("contract");
    const r = await copy.run({ argv: ["npm", "run", "-s", "contract"], env: TRACE, timeoutMs: T });
    expect(r).toMatchObject({ exitCode: 0, stderr: "tsc: remembered\n" });
    expect(JSON.parse(r.stdout).routes).toContain("GET /api/cart");
    await copy.remove();
  });

  it("compiles for real once anything in the tree differs, and reports its errors as before", async () => {
    const copy = await built.copy("edited");
    await writeFile(join(copy.path, "src", "broken.ts"), "export const n: number = 'not a number';\n");
    const r = await copy.run({ argv: ["npm", "run", "-s", "contract"], env: TRACE, timeoutMs: T });
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout).toContain("src/broken.ts");
    expect(r.stderr).not.toContain("remembered");
    await copy.remove();
  });

  it("compiles for real when the outputs were changed, or the arguments differ", async () => {
    const copy = await built.copy("outputs");
    await writeFile(join(copy.path, "dist", "src", "contract.js"), "console.log('tampered');\n");
    const r = await copy.run({ argv: ["tsc", "-p", "tsconfig.json"], env: TRACE, timeoutMs: T });
    expect(r).toMatchObject({ exitCode: 0, stderr: "" });
    const other = await copy.run({ argv: ["tsc", "-p", "tsconfig.json", "--noEmit"], env: TRACE, timeoutMs: T });
    expect(other).toMatchObject({ exitCode: 0, stderr: "" });
    await copy.remove();
  });
});
