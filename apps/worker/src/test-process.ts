import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";

// Tests only: the worker as a process of its own (main.test.ts, outage.test.ts).
const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const mainPath = fileURLToPath(new URL("./main.ts", import.meta.url));

/** Workers a test started; one still running after its test (it failed midway) is killed. */
const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** The worker as an operator runs it: a separate process with only the environment we give it. */
export function startWorkerProcess(env: Record<string, string>, dataDir: string) {
  const child = spawn(process.execPath, ["--import", "tsx", mainPath], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? "", RHUMBATRON_GIT_PORT: "0", RHUMBATRON_DATA_DIR: dataDir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  const out = { stdout: "", stderr: "" };
  // Every JSON line the worker printed, kept from the start: a wait for a line that arrived in the
  // same chunk as an earlier one (a busy machine coalesces writes) finds it here.
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let partial = "";
  child.stdout?.on("data", (c) => {
    out.stdout += c;
    partial += c;
    const complete = partial.split("\n");
    partial = complete.pop() ?? "";
    for (const raw of complete) if (raw.trim()) lines.push(JSON.parse(raw) as Record<string, unknown>);
    for (const w of [...waiters]) w();
  });
  child.stderr?.on("data", (c) => {
    out.stderr += c;
  });
  // "close", not "exit": exit can come before the last of stdout has been read, and a test reading
  // the worker's final lines once it has exited would then miss them.
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  /** Resolves once `n` lines match, whenever they were printed; the worker exiting first fails with its output. */
  const count = (match: (l: Record<string, unknown>) => boolean, n: number) =>
    new Promise<Record<string, unknown>[]>((resolve, reject) => {
      const check = () => {
        const found = lines.filter(match);
        if (found.length >= n) {
          waiters.delete(check);
          resolve(found);
        }
      };
      waiters.add(check);
      check();
      void exited.then((code) => {
        if (!waiters.has(check)) return;
        waiters.delete(check);
        reject(new Error(`the worker exited (${code}) first:\n${out.stdout}\n${out.stderr}`));
      });
    });
  /** The first line that matches. */
  const line = async (match: (l: Record<string, unknown>) => boolean) =>
    (await count(match, 1))[0] as Record<string, unknown>;
  return { child, out, exited, line, count, lines };
}
