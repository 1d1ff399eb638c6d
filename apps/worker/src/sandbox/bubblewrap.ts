import { spawn } from "node:child_process";
import { lstat, readlink } from "node:fs/promises";
import { join } from "node:path";
import { DEFAULT_COMMAND_ALLOWLIST, type Sandbox, type SandboxCommand } from "@rhumbatron/core";
import {
  assertProxySocket,
  LAUNCHER_DIR_INSIDE,
  LAUNCHER_FILE,
  PROXY_SOCKET_INSIDE,
  writeLauncher,
} from "./network.ts";
import { detectProcessCap, type ProcessCap, runUnderCap } from "./pids-cgroup.ts";
import { checkCommand, openWorkspace, type SandboxLimits, SYSTEM_PATH, toolchainBins } from "./workspace.ts";

/**
 * Sandbox adapter on bubblewrap (PLATFORM.md). Each command gets fresh namespaces (`--unshare-all`:
 * no network, its own pids), drops to an unprivileged uid with no capabilities, and sees the system
 * toolchain read-only, a private /tmp, and its run directory at /workspace/<dirName> as the only
 * writable host path. `--clearenv`: only PATH, HOME, LANG and the command's explicit env get in,
 * so no DATABASE_URL, API key or INNGEST_* ever reaches it. A command with `network` (the setup
 * step) keeps the same empty network namespace and gets only the registry proxy's socket bound in,
 * reached through the worker's launcher (network.ts).
 */
export interface BubblewrapOptions {
  /** Host directory holding one folder per Sandbox (`proj-<uuid>`). */
  root: string;
  /** Extra read-only mounts at the same path, e.g. the node binary's directory or node_modules/typescript. */
  toolchainPaths?: readonly string[];
  allowlist?: readonly string[];
  limits: SandboxLimits;
  bwrapPath?: string;
}

export type BubblewrapSandbox = Sandbox & { readonly kind: "bubblewrap"; readonly processCap: ProcessCap };

const SYSTEM_MOUNTS = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc/ssl", "/etc/alternatives", "/etc/ld.so.cache"];
const SANDBOX_UID = "1000";
const INSTALL_HINT = "apt-get install -y bubblewrap";

/** Mount arguments for the system paths that exist; merged-/usr symlinks (/bin -> usr/bin) stay symlinks. */
async function systemMounts(extra: readonly string[]): Promise<string[]> {
  const args: string[] = [];
  for (const p of SYSTEM_MOUNTS) {
    const st = await lstat(p).catch(() => null);
    if (!st) continue;
    if (st.isSymbolicLink() && p.split("/").length === 2) args.push("--symlink", await readlink(p), p);
    else args.push("--ro-bind", p, p);
  }
  for (const p of extra) args.push("--ro-bind", p, p); // fails loudly in bwrap if the path is missing
  return args;
}

function bwrapArgs(o: {
  mounts: string[];
  path: string;
  dirName: string;
  rel: string;
  env: Record<string, string>;
  /** Host paths of the launcher's folder and the proxy's socket, for a command with network. */
  network?: { launcherDir: string; proxySocket: string };
}) {
  const inside = `/workspace/${o.dirName}`;
  return [
    "--unshare-all",
    "--unshare-user", // required, not "-try": without a user namespace the command would keep root's capabilities
    "--uid",
    SANDBOX_UID,
    "--gid",
    SANDBOX_UID,
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
    // The private /tmp first: mounts are applied in order, so a toolchain under /tmp (a checkout
    // there, say) is bound on top of it instead of being hidden by it.
    "--tmpfs",
    "/tmp",
    ...o.mounts,
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--bind",
    o.path,
    inside,
    ...(o.network
      ? ["--ro-bind", o.network.launcherDir, LAUNCHER_DIR_INSIDE, "--bind", o.network.proxySocket, PROXY_SOCKET_INSIDE]
      : []),
    "--remount-ro",
    "/",
    "--chdir",
    o.rel ? `${inside}/${o.rel}` : inside,
    "--clearenv",
    ...Object.entries(o.env).flatMap(([k, v]) => ["--setenv", k, v]),
  ];
}

/** Whether bwrap can start a sandbox here; the reason says how to fix it when it cannot. */
export async function bubblewrapAvailable(bwrapPath = "bwrap"): Promise<{ ok: true } | { ok: false; reason: string }> {
  const args = ["--unshare-all", "--unshare-user", "--die-with-parent", ...(await systemMounts([]))];
  return new Promise((resolve) => {
    const child = spawn(bwrapPath, [...args, "--proc", "/proc", "--dev", "/dev", "true"], { stdio: "pipe" });
    let stderr = "";
    child.stderr.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    child.on("error", (e) => resolve({ ok: false, reason: `${bwrapPath}: ${e.message} (${INSTALL_HINT})` }));
    child.on("close", (code) =>
      resolve(code === 0 ? { ok: true } : { ok: false, reason: `${bwrapPath} exited ${code}: ${stderr.trim()}` }),
    );
  });
}

export async function bubblewrapSandbox(options: BubblewrapOptions): Promise<BubblewrapSandbox> {
  const allowlist = options.allowlist ?? DEFAULT_COMMAND_ALLOWLIST;
  const bins = await toolchainBins(options.toolchainPaths ?? []);
  const mounts = await systemMounts(options.toolchainPaths ?? []);
  const PATH = [...bins, ...SYSTEM_PATH].join(":");
  const cap = await detectProcessCap();
  const bwrap = options.bwrapPath ?? "bwrap";
  // Written on the first command with network; `.network` can never be a Sandbox's name (proj-<uuid>).
  let launcherDir: Promise<string> | undefined;

  async function run(path: string, dirName: string, cmd: SandboxCommand) {
    const rel = await checkCommand(path, cmd, allowlist);
    const env = { PATH, HOME: `/workspace/${dirName}`, LANG: "C.UTF-8", ...cmd.env };
    let network: { launcherDir: string; proxySocket: string } | undefined;
    let command = cmd.argv;
    if (cmd.network) {
      await assertProxySocket(cmd.network.proxySocket);
      launcherDir ??= writeLauncher(join(options.root, ".network")).catch((err: unknown) => {
        launcherDir = undefined; // the next command tries again
        throw err;
      });
      network = { launcherDir: await launcherDir, proxySocket: cmd.network.proxySocket };
      // argv[0] was checked above; the launcher in front of it is the worker's own.
      command = ["node", `${LAUNCHER_DIR_INSIDE}/${LAUNCHER_FILE}`, PROXY_SOCKET_INSIDE, ...cmd.argv];
    }
    const argv = [
      bwrap,
      ...bwrapArgs({ mounts, path, dirName, rel, env, ...(network ? { network } : {}) }),
      "--",
      ...command,
    ];
    return runUnderCap(cap, options.limits, argv, {
      cwd: "/", // the sandbox chdirs itself; a vanished workspace must not fail the spawn on the host
      env: { PATH: SYSTEM_PATH.join(":") }, // bwrap's own environment: nothing from the worker
      cmd,
    });
  }

  return {
    kind: "bubblewrap",
    isolates: true,
    // A local process: charged the seconds its workspace ran, no idle tail (docs/sandbox.md).
    billing: "measured",
    processCap: cap.cap,
    open: (runDir) => openWorkspace(options.root, runDir, (path, cmd) => run(path, runDir.dirName, cmd)),
  };
}
