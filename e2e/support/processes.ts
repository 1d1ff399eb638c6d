import { type ChildProcess, spawn } from "node:child_process";

/** A product process e2e started (the stack server, a split-hosted web app) in a process group of its own. */
export interface ProductProcess {
  child: ChildProcess;
  /** Resolves with the exit code (null after a signal) once the process has ended. */
  exited: Promise<number | null>;
  /**
   * SIGTERM to its whole group (to the process alone when it stops its children itself: `termLeaderOnly`),
   * SIGKILL to the group if it is still running after `graceMs`; resolves once it is gone.
   */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Runs `command` as e2e runs the product: as a process, its output shown line by line behind
 * `prefix` unless `quiet`, except lines `onLine` takes (returns true for).
 */
export function startProductProcess(
  command: string,
  args: string[],
  o: {
    cwd: string;
    env: NodeJS.ProcessEnv;
    prefix: string;
    quiet: boolean;
    onLine?: (line: string) => boolean;
    termLeaderOnly?: boolean;
  },
): ProductProcess {
  const child = spawn(command, args, { cwd: o.cwd, env: o.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const show = (stream: NodeJS.WriteStream) => {
    let rest = "";
    return (chunk: Buffer) => {
      const lines = (rest + chunk.toString("utf8")).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        if (o.onLine?.(line) || o.quiet || !line.trim()) continue;
        stream.write(`${o.prefix}${line}\n`);
      }
    };
  };
  child.stdout?.on("data", show(process.stdout));
  child.stderr?.on("data", show(process.stderr));
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code));
    child.once("error", () => resolve(1));
  });
  const send = (signal: NodeJS.Signals, group: boolean) => {
    try {
      if (child.pid !== undefined) process.kill(group ? -child.pid : child.pid, signal);
    } catch {
      // the group is gone
    }
  };
  const stop = async (graceMs = 30_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    send("SIGTERM", !o.termLeaderOnly);
    const gone = await Promise.race([exited.then(() => true), delay(graceMs).then(() => false)]);
    if (!gone) {
      send("SIGKILL", true);
      await exited;
    }
  };
  return { child, exited, stop };
}

/** Waits until `url` answers (any status below 500, or 503); throws when `exited` settles first or time is up. */
export async function waitForAnswer(url: string, timeoutMs: number, exited: Promise<unknown>): Promise<void> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await delay(300)) {
    if (gone) throw new Error(`the process serving ${url} exited`);
    const status = await fetch(url, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.status,
      () => 0,
    );
    if (status !== 0 && (status < 500 || status === 503)) return;
  }
  throw new Error(`${url} did not answer within ${Math.round(timeoutMs / 1000)} s`);
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
