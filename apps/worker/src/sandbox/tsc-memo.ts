import { access, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The Sandbox's `tsc` remembers a compile it already saw (issue #19: a Candidate verified in
 * seconds). Every script of the template compiles first (`tsc -p tsconfig.json && …`),
 * so one Candidate's checks compiled the same tree once per check, each time parsing TypeScript's
 * libraries again (most of a check's time). The wrapper, first on PATH, runs the real compiler and,
 * after a run that exited 0 and printed nothing, records a fingerprint of the workspace as that run
 * left it (every file's path, mode and content under $HOME, the workspace, `.git` and npm's `.npm` aside) in
 * `.git/rhumbatron-tsc-memo.json`. A later `tsc` with the same arguments, in the same directory,
 * on a workspace with exactly that fingerprint prints nothing and exits 0 without compiling: what
 * the compiler would do there, since it ran on those very inputs and its outputs are in place and
 * unchanged (a check's copy of the built tree is one). It only remembers when that holds by
 * construction: `tsc`, `tsc -p <file|dir>` or `tsc --project <…>` whose config (plain JSON) names
 * an `outDir` that its emit stayed inside, no `exclude` (so the outputs are never inputs), and no
 * `extends`, `files` or `references`. Anything else, a tree over 20,000 files or 256 MB, or no
 * `.git` folder, runs the real compiler every time.
 */
export const TSC_MEMO_FILE = ".git/rhumbatron-tsc-memo.json";

const SHIM = (realTsc: string) => `#!/usr/bin/env node
// Written by the Rhumbatron Sandbox (apps/worker/src/sandbox/tsc-memo.ts): a tsc that remembers a compile.
"use strict";
const REAL = ${JSON.stringify(realTsc)};
const { spawn } = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");
const MAX_FILES = 20000;
const MAX_BYTES = 256 * 1024 * 1024;
const args = process.argv.slice(2);
const root = process.env.HOME || "";

function files(dir) {
  const out = new Map();
  let bytes = 0;
  const walk = (rel) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? rel + "/" + name : name;
      if (r === ".git" || r === ".npm") continue; // git's and npm's own (HOME is the workspace): never tsc's inputs
      const p = path.join(dir, r);
      const st = fs.lstatSync(p);
      if (out.size >= MAX_FILES) throw new Error("too many files");
      if (st.isDirectory()) { out.set(r, "d"); walk(r); continue; }
      const h = crypto.createHash("sha256");
      if (st.isSymbolicLink()) h.update("l" + fs.readlinkSync(p));
      else if (st.isFile()) {
        bytes += st.size;
        if (bytes > MAX_BYTES) throw new Error("too large");
        h.update((st.mode & 0o111 ? "x" : "-") + st.size + ":");
        h.update(fs.readFileSync(p));
      } else h.update("o" + st.mode);
      out.set(r, h.digest("hex"));
    }
  };
  walk("");
  return out;
}
const digest = (m) => crypto.createHash("sha256").update(JSON.stringify([...m])).digest("hex");

/** The config's outDir relative to the workspace, when this call may be remembered; else null. */
function rememberable() {
  let project = "tsconfig.json";
  if (args.length === 2 && (args[0] === "-p" || args[0] === "--project")) project = args[1];
  else if (args.length !== 0) return null;
  let file = path.resolve(process.cwd(), project);
  try { if (fs.statSync(file).isDirectory()) file = path.join(file, "tsconfig.json"); } catch { return null; }
  let config;
  try { config = JSON.parse(fs.readFileSync(file, "utf8")); } catch { return null; }
  if (!config || typeof config !== "object" || config.extends || config.files || config.references || config.exclude) return null;
  const outDir = config.compilerOptions && config.compilerOptions.outDir;
  if (typeof outDir !== "string" || !outDir) return null;
  const rel = path.relative(root, path.resolve(path.dirname(file), outDir));
  if (!rel || rel.startsWith("..") || path.isAbsolute(rel)) return null;
  return rel.split(path.sep).join("/");
}

const memoFile = path.join(root, ".git", "rhumbatron-tsc-memo.json");
const key = JSON.stringify([args, path.relative(root, process.cwd())]);
let outDir = null;
let before = null;
try {
  if (root && fs.statSync(path.join(root, ".git")).isDirectory()) {
    outDir = rememberable();
    if (outDir !== null) before = files(root);
  }
} catch { before = null; }
if (before !== null) {
  let memo = {};
  try { memo = JSON.parse(fs.readFileSync(memoFile, "utf8")); } catch {}
  if (memo[key] === digest(before)) {
    // Tests ask to be told (a compile that did not happen leaves no other trace).
    if (process.env.RHUMBATRON_TSC_MEMO === "trace") process.stderr.write("tsc: remembered\\n");
    process.exit(0);
  }
}

const child = spawn(process.execPath, [REAL, ...args], { stdio: ["inherit", "pipe", "pipe"] });
let printed = 0;
child.stdout.on("data", (b) => { printed += b.length; process.stdout.write(b); });
child.stderr.on("data", (b) => { printed += b.length; process.stderr.write(b); });
child.on("close", (code, signal) => {
  if (code === 0 && printed === 0 && before !== null) {
    try {
      const after = files(root);
      const inside = (r) => r === outDir || r.startsWith(outDir + "/");
      const changed = [...new Set([...before.keys(), ...after.keys()])].filter((r) => before.get(r) !== after.get(r));
      if (changed.every(inside)) {
        let memo = {};
        try { memo = JSON.parse(fs.readFileSync(memoFile, "utf8")); } catch {}
        memo[key] = digest(after);
        fs.writeFileSync(memoFile, JSON.stringify(memo));
      }
    } catch {}
  }
  if (signal) process.kill(process.pid, signal);
  process.exitCode = code === null ? 1 : code;
});
`;

/**
 * Writes the wrapper into `<dir>/tsc` (with a package.json that keeps it CommonJS) around the
 * first `tsc` found in `bins`, and returns `dir`; null when no bin holds a `tsc`.
 */
export async function writeTscMemo(dir: string, bins: readonly string[]): Promise<string | null> {
  let real: string | null = null;
  for (const bin of bins) {
    const candidate = join(bin, "tsc");
    if (
      await access(candidate).then(
        () => true,
        () => false,
      )
    ) {
      real = candidate;
      break;
    }
  }
  if (!real) return null;
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await writeFile(join(dir, "package.json"), '{"type":"commonjs"}\n');
  await writeFile(join(dir, "tsc"), SHIM(real), { mode: 0o755 });
  return dir;
}
