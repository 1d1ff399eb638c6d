import { execFile } from "node:child_process";
import { mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  type CommandResult,
  commandRefusal,
  DomainError,
  isRunDirName,
  type RhumbatronConfig,
  type RunDir,
  type SandboxCommand,
  type SandboxWorkspace,
  sandboxName,
  workspaceRelativePath,
} from "@rhumbatron/core";

/** What both adapters share: where run directories live and which commands may run. */
export interface SandboxLimits {
  /** Per stream (stdout, stderr) of one command. */
  maxOutputBytes: number;
  /** Tasks one command may have at once (see pids-cgroup.ts for how it is enforced). */
  maxProcesses: number;
}

export function sandboxLimits(config: Pick<RhumbatronConfig, "sandbox">): SandboxLimits {
  return { maxOutputBytes: config.sandbox.maxOutputBytes, maxProcesses: config.sandbox.maxProcesses };
}

/** Structured logger slice (pino's Logger fits). */
export interface SandboxLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

/** PATH entries for the toolchain: `<p>/bin` when it exists (node_modules/typescript), else `<p>`. */
export async function toolchainBins(paths: readonly string[]): Promise<string[]> {
  const bins: string[] = [];
  for (const p of paths) {
    const bin = join(p, "bin");
    bins.push((await isDir(bin)) ? bin : p);
  }
  return bins;
}

export const SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin"];
/** The sandbox sets these itself; a command's env may not replace them. */
const RESERVED_ENV = new Set(["PATH", "HOME"]);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

async function isDir(p: string): Promise<boolean> {
  return stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** The host directory `<root>/proj-<uuid>/<dirName>`. */
export function hostRunDir(root: string, runDir: RunDir): string {
  if (!isRunDirName(runDir.dirName)) {
    throw new DomainError("INVALID_INPUT", `not a run directory name: ${JSON.stringify(runDir.dirName)}`);
  }
  return join(root, sandboxName(runDir.projectId), runDir.dirName);
}

/** Checks a command before anything starts; returns its cwd relative to the workspace. */
export async function checkCommand(path: string, cmd: SandboxCommand, allowlist: readonly string[]): Promise<string> {
  const refusal = commandRefusal(cmd.argv, cmd.allow ? [...allowlist, ...cmd.allow] : allowlist);
  if (refusal) throw new DomainError("FORBIDDEN", refusal);
  if (!Number.isFinite(cmd.timeoutMs) || cmd.timeoutMs <= 0) {
    throw new DomainError("INVALID_INPUT", `timeoutMs must be positive, got ${cmd.timeoutMs}`);
  }
  for (const name of Object.keys(cmd.env ?? {})) {
    if (!ENV_NAME.test(name) || RESERVED_ENV.has(name)) {
      throw new DomainError("INVALID_INPUT", `environment variable ${JSON.stringify(name)} may not be set`);
    }
  }
  const rel = workspaceRelativePath(cmd.cwd);
  // A lost workspace is restored by the caller (it knows what the run had), never silently recreated here.
  if (!(await isDir(path))) {
    throw new DomainError("UNAVAILABLE", `sandbox workspace ${path} is gone (Sandbox loss)`, {
      reason: "sandbox_lost",
    });
  }
  if (rel && !(await isDir(join(path, rel)))) {
    throw new DomainError("INVALID_INPUT", `cwd ${JSON.stringify(rel)} is not a directory in the workspace`);
  }
  return rel;
}

/**
 * A workspace one check may have to itself: `copy(label)` copies the workspace as it is now
 * (`cp -a --reflink=auto`: a real copy, or copy-on-write where the file system can; never hard
 * links, so nothing written in the copy reaches the original or another copy) to
 * `<path>.checks/<label>`. Commands in the copy run at the original's path inside the Sandbox, so
 * what they print names the same paths as in the original. Removing the original removes its copies.
 */
export type CopyableWorkspace = SandboxWorkspace & { copy(label: string): Promise<SandboxWorkspace> };

export function canCopy(ws: SandboxWorkspace): ws is CopyableWorkspace {
  return typeof (ws as Partial<CopyableWorkspace>).copy === "function";
}

const COPY_LABEL = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** `cp -a --reflink=auto from/. to` (GNU cp): symlinks stay symlinks, modes and times kept. */
export async function copyTree(from: string, to: string): Promise<void> {
  await rm(to, { recursive: true, force: true });
  await mkdir(to, { recursive: true, mode: 0o700 });
  await new Promise<void>((resolve, reject) =>
    execFile(
      "cp",
      ["-a", "--reflink=auto", `${from}/.`, to],
      { env: { PATH: SYSTEM_PATH.join(":") } as unknown as NodeJS.ProcessEnv },
      (err, _o, e) =>
        err
          ? reject(new DomainError("UNAVAILABLE", `could not copy the workspace: ${e.trim() || err.message}`))
          : resolve(),
    ),
  );
}

/** A workspace whose `run` is supplied by the adapter; open creates the directory (reused if present). */
export async function openWorkspace(
  root: string,
  runDir: RunDir,
  run: (path: string, cmd: SandboxCommand) => Promise<CommandResult>,
): Promise<CopyableWorkspace> {
  const path = hostRunDir(root, runDir);
  const copies = `${path}.checks`;
  await mkdir(path, { recursive: true, mode: 0o700 });
  return {
    path,
    run: (cmd) => run(path, cmd),
    remove: async () => {
      await rm(copies, { recursive: true, force: true });
      await rm(path, { recursive: true, force: true });
    },
    async copy(label) {
      if (!COPY_LABEL.test(label)) throw new DomainError("INVALID_INPUT", `not a copy label: ${JSON.stringify(label)}`);
      const to = join(copies, label);
      await mkdir(copies, { recursive: true, mode: 0o700 });
      await copyTree(path, to);
      return { path: to, run: (cmd) => run(to, cmd), remove: () => rm(to, { recursive: true, force: true }) };
    },
  };
}
