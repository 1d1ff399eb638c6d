import { access, mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CommandResult, SandboxCommand } from "@rhumbatron/core";
import { runCapped } from "./run-capped.ts";

/**
 * The process cap. RLIMIT_NPROC (`prlimit --nproc`) is not enforced for processes whose host uid
 * is 0, and bubblewrap run by root maps the sandbox user to host root, so as root the cap is a
 * pids cgroup per command instead: `pids.max` stops a fork bomb, and on timeout every task in the
 * cgroup is killed, including ones that left the process group. Without a writable pids
 * controller the cap falls back to prlimit (effective only when the worker is not root), else none.
 */
export type ProcessCap = "cgroup" | "rlimit" | "none";

const V1 = "/sys/fs/cgroup/pids";
const V2 = "/sys/fs/cgroup";
let seq = 0;

async function exists(p: string): Promise<boolean> {
  return access(p).then(
    () => true,
    () => false,
  );
}

async function pidsHierarchy(): Promise<string | null> {
  if (await exists(join(V1, "cgroup.procs"))) return V1;
  const controllers = await readFile(join(V2, "cgroup.controllers"), "utf8").catch(() => "");
  if (!controllers.split(/\s+/).includes("pids")) return null;
  const subtree = await readFile(join(V2, "cgroup.subtree_control"), "utf8").catch(() => "");
  if (!subtree.split(/\s+/).includes("pids")) {
    await writeFile(join(V2, "cgroup.subtree_control"), "+pids").catch(() => {});
  }
  return V2;
}

export interface PidsCgroup {
  /** argv that joins the cgroup before exec'ing `argv` (so nothing forks outside it). */
  wrap(argv: string[]): string[];
  killAll(): Promise<void>;
  remove(): Promise<void>;
}

async function killAll(dir: string): Promise<number> {
  const procs = await readFile(join(dir, "cgroup.procs"), "utf8").catch(() => "");
  const pids = procs.split("\n").filter(Boolean).map(Number);
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  return pids.length;
}

export async function createPidsCgroup(hierarchy: string, maxProcesses: number): Promise<PidsCgroup> {
  const dir = join(hierarchy, `rhumbatron-sandbox-${process.pid}-${++seq}`);
  await mkdir(dir);
  await writeFile(join(dir, "pids.max"), String(maxProcesses));
  return {
    wrap: (argv) => ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', join(dir, "cgroup.procs"), ...argv],
    killAll: async () => void (await killAll(dir)),
    async remove() {
      // rmdir succeeds once the last task is reaped; killed tasks take a moment to go.
      for (let i = 0; i < 50; i++) {
        if (
          (await killAll(dir)) === 0 &&
          (await rmdir(dir).then(
            () => true,
            () => false,
          ))
        )
          return;
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

/** Which cap this host supports; probes by creating and removing one cgroup. */
export async function detectProcessCap(): Promise<{ cap: ProcessCap; hierarchy: string | null }> {
  const hierarchy = await pidsHierarchy();
  if (hierarchy) {
    const probe = await createPidsCgroup(hierarchy, 1).catch(() => null);
    if (probe) {
      await probe.remove();
      return { cap: "cgroup", hierarchy };
    }
  }
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0 && (await exists("/usr/bin/prlimit"))) return { cap: "rlimit", hierarchy: null };
  return { cap: "none", hierarchy: null };
}

/** Runs `argv` under the chosen cap; `done` releases it. */
export async function capProcesses(
  cap: { cap: ProcessCap; hierarchy: string | null },
  maxProcesses: number,
  argv: string[],
): Promise<{ argv: string[]; onTimeout: () => Promise<void>; done: () => Promise<void> }> {
  const none = async () => {};
  if (cap.cap === "cgroup" && cap.hierarchy) {
    const cg = await createPidsCgroup(cap.hierarchy, maxProcesses);
    return { argv: cg.wrap(argv), onTimeout: cg.killAll, done: cg.remove };
  }
  if (cap.cap === "rlimit")
    return { argv: ["/usr/bin/prlimit", `--nproc=${maxProcesses}`, "--", ...argv], onTimeout: none, done: none };
  return { argv, onTimeout: none, done: none };
}

/**
 * One Sandbox command under the process cap, as both adapters run it: `argv` wrapped by the cap,
 * run with the command's stdin, signal and timeout and the adapter's output limit, the cap released
 * afterwards whatever happened.
 */
export async function runUnderCap(
  cap: { cap: ProcessCap; hierarchy: string | null },
  limits: { maxProcesses: number; maxOutputBytes: number },
  argv: string[],
  o: { cwd: string; env: Record<string, string>; cmd: SandboxCommand },
): Promise<CommandResult> {
  const capped = await capProcesses(cap, limits.maxProcesses, argv);
  try {
    const [file, ...args] = capped.argv as [string, ...string[]];
    return await runCapped({
      file,
      args,
      cwd: o.cwd,
      env: o.env,
      ...(o.cmd.stdin === undefined ? {} : { stdin: o.cmd.stdin }),
      ...(o.cmd.signal === undefined ? {} : { signal: o.cmd.signal }),
      ...(o.cmd.onStdout === undefined ? {} : { onStdout: o.cmd.onStdout }),
      timeoutMs: o.cmd.timeoutMs,
      maxOutputBytes: limits.maxOutputBytes,
      onTimeout: capped.onTimeout,
    });
  } finally {
    await capped.done();
  }
}
