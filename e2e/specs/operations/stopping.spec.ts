import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { freePort } from "@rhumbatron/fixtures";
import { ROOT } from "../../support/root.ts";

/**
 * Stopping `npm start` the way a process manager does: one signal to the PID it started (systemd,
 * `kill <pid>`, a container runtime), not to the terminal's whole process group as Ctrl-C does.
 * `npm start` is run as a user runs it (npm, on a data folder and ports of its own, with the web
 * build the e2e run already made), and every process it started must be gone within the bounded
 * time the README gives (10 s for web and worker, then the database's own 10 s, and a margin).
 */
const STOP_LIMIT = 40_000;

/** Every descendant of `pid` now, each with its start time (so a reused PID is not mistaken for it). */
function descendants(pid: number): { pid: number; start: string; cmd: string }[] {
  const all = readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const cmd = readFileSync(`/proc/${d}/cmdline`, "utf8").replaceAll("\0", " ").trim();
        return [{ pid: Number(d), ppid: Number(fields[1]), start: fields[19] ?? "", cmd }];
      } catch {
        return []; // gone while we looked
      }
    });
  const out: { pid: number; start: string; cmd: string }[] = [];
  const walk = (p: number) => {
    for (const c of all.filter((x) => x.ppid === p)) {
      out.push({ pid: c.pid, start: c.start, cmd: c.cmd });
      walk(c.pid);
    }
  };
  walk(pid);
  return out;
}

function alive(p: { pid: number; start: string }): boolean {
  try {
    const stat = readFileSync(`/proc/${p.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] === p.start && fields[0] !== "Z";
  } catch {
    return false;
  }
}

async function startNpm(dataDir: string): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn("npm", ["start"], {
    cwd: ROOT,
    // Its own process group, so nothing the test sends reaches it by the group.
    detached: true,
    env: {
      ...process.env,
      DATABASE_URL: "",
      RHUMBATRON_DATA_DIR: dataDir,
      PORT: String(await freePort()),
      RHUMBATRON_EMBEDDED_PG_PORT: String(await freePort()),
      RHUMBATRON_GIT_PORT: String(await freePort()),
      RHUMBATRON_WORKER_PORT: String(await freePort()),
      RHUMBATRON_LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  child.stderr?.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  // Up, or ended: a start that fails says why at once instead of waiting out the limit.
  await expect
    .poll(() => (child.exitCode !== null ? `exited ${child.exitCode}: ${out}` : out), {
      timeout: 180_000,
      message: "npm start did not come up",
    })
    .toMatch(/press Ctrl-C to stop|^exited/);
  expect(child.exitCode, out).toBeNull();
  return { child, output: () => out };
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  test(`${signal} to the npm start PID stops web, worker and the embedded Postgres, saying so`, async () => {
    test.setTimeout(300_000);
    const dataDir = mkdtempSync(join(tmpdir(), "rhumbatron-stop-"));
    // The embedded Postgres runs as its own system user when we are root; let it reach its folder.
    chmodSync(dataDir, 0o755);
    const { child, output } = await startNpm(dataDir);
    try {
      const started = descendants(child.pid ?? 0);
      // The whole product runs under it: the embedded Postgres, the worker and the web server.
      expect(started.map((p) => p.cmd).join("\n")).toMatch(/postgres -D/);
      expect(started.map((p) => p.cmd).join("\n")).toMatch(/apps\/worker\/src\/main\.ts/);
      expect(started.map((p) => p.cmd).join("\n")).toMatch(/next-server|next start/);
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      process.kill(child.pid ?? 0, signal);
      await expect
        .poll(() => started.filter(alive).map((p) => `${p.pid} ${p.cmd}`), { timeout: STOP_LIMIT })
        .toEqual([]);
      expect(await exited).toBe(0);
      expect(output()).toContain("stopping web, worker and database");
      expect(output()).toMatch(/rhumbatron: stopped\n/);
    } finally {
      // A failed run leaves nothing behind: whatever is left of this start is killed by its PIDs.
      for (const p of descendants(child.pid ?? 0)) process.kill(p.pid, "SIGKILL");
      if (child.exitCode === null) child.kill("SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
