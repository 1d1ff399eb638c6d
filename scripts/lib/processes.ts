import { type ChildProcess, spawn } from "node:child_process";

export interface Managed {
  name: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

/** Starts a child with its output prefixed by its name, in its own process group so we can stop all of it. */
export function startProcess(
  name: string,
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; quiet?: boolean },
): Managed {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const prefix = (chunk: Buffer, stream: NodeJS.WriteStream) => {
    if (options.quiet) return;
    for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) stream.write(`[${name}] ${line}\n`);
  };
  child.stdout?.on("data", (c: Buffer) => prefix(c, process.stdout));
  child.stderr?.on("data", (c: Buffer) => prefix(c, process.stderr));
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code));
    child.once("error", () => resolve(1));
  });
  return { name, child, exited };
}

/** SIGTERM to the whole group, SIGKILL after a grace period. */
export async function stopProcess(p: Managed, graceMs = 10_000): Promise<void> {
  if (p.child.exitCode !== null || p.child.pid === undefined) return;
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-(p.child.pid as number), s);
    } catch {
      // already gone
    }
  };
  signal("SIGTERM");
  const timer = setTimeout(() => signal("SIGKILL"), graceMs);
  await p.exited;
  clearTimeout(timer);
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
