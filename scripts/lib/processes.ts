import { type ChildProcess, spawn } from "node:child_process";

/** How a process ended: its exit code, or the signal that killed it, or why it could not start. */
export interface ExitReason {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (spawn error). */
  error?: string;
}

export interface Managed {
  name: string;
  child: ChildProcess;
  /** The exit code (null when killed by a signal; 1 when it could not start). */
  exited: Promise<number | null>;
  /** The whole exit reason. */
  exit: Promise<ExitReason>;
}

/** Starts a child with its output prefixed by its name, in its own process group so we can stop all of it. */
export function startProcess(
  name: string,
  command: string,
  args: string[],
  options: {
    cwd: string;
    env: NodeJS.ProcessEnv;
    quiet?: boolean;
    /** Rewrites a line before it is shown, or drops it (null). */
    format?: (line: string) => string | null;
  },
): Managed {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const prefix = (chunk: Buffer, stream: NodeJS.WriteStream) => {
    if (options.quiet) return;
    for (const raw of chunk.toString("utf8").split("\n")) {
      const line = raw.trim() && options.format ? options.format(raw) : raw;
      if (line?.trim()) stream.write(`[${name}] ${line}\n`);
    }
  };
  child.stdout?.on("data", (c: Buffer) => prefix(c, process.stdout));
  child.stderr?.on("data", (c: Buffer) => prefix(c, process.stderr));
  return managedChild(name, child);
}

/** A child someone else spawned (the embedded Postgres's server), watched like one of ours; it may have exited already. */
export function managedChild(name: string, child: ChildProcess): Managed {
  const exit = new Promise<ExitReason>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    child.once("exit", (code, signal) => resolve({ code, signal }));
    child.once("error", (err) => resolve({ code: 1, signal: null, error: err.message }));
  });
  return { name, child, exited: exit.then((r) => r.code), exit };
}

/** Sends a signal to every process in the group `pgid` leads; false when none is left. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Stops a child and everything it started (its process group): SIGTERM, then SIGKILL for whatever is
 * still running after `graceMs`. Always returns: a process that ignores SIGTERM or a stray grandchild
 * cannot make Ctrl-C hang. A child that has already exited is left alone: its group ID may belong to
 * another process by now (the supervisor cleans up a crashed child's group as it exits).
 */
export async function stopProcess(p: Managed, graceMs = 10_000): Promise<void> {
  const pgid = p.child.pid;
  if (pgid === undefined || p.child.exitCode !== null || p.child.signalCode !== null) return;
  const deadline = Date.now() + graceMs;
  signalGroup(pgid, "SIGTERM");
  await Promise.race([p.exit, sleep(graceMs)]);
  // The leader is gone (or out of time); give the rest of its group what is left of the grace period.
  while (Date.now() < deadline && signalGroup(pgid, 0)) await sleep(100);
  if (signalGroup(pgid, "SIGKILL")) {
    // SIGKILL cannot be refused; the bound is only against a process stuck in the kernel.
    await Promise.race([p.exit, sleep(5000)]);
  }
}

export async function waitForHttp(
  url: string,
  options: { timeoutMs: number; abort?: Promise<unknown> },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let aborted = false;
  void options.abort?.then(() => {
    aborted = true;
  });
  while (Date.now() < deadline) {
    if (aborted) throw new Error(`the process serving ${url} exited`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.status < 500 || res.status === 503) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${url} did not answer within ${Math.round(options.timeoutMs / 1000)} s`);
}
