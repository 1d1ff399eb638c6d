import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkReachable, type DatabaseHandle, type EmbeddedHandle, openDatabase } from "./database.ts";
import { freePort } from "./ports.ts";
import { runningPostmaster, stopPostmaster } from "./postmaster.ts";
import { type Managed, startProcess } from "./processes.ts";
import { RESTART_POLICY, type RestartPolicy } from "./restart-policy.ts";
import { type RestartEvent, type SupervisedProcess, Supervisor } from "./supervisor.ts";
import { watchEmbeddedPostgres } from "./watch-postgres.ts";

// Real processes (node -e), real signals. Nothing waits on a sleep: each test waits for the event
// it is about (a restart, the give-up, an exit) under vitest's one outer limit.
const FAST: RestartPolicy = { ...RESTART_POLICY, initialDelayMs: 10, maxDelayMs: 40 };
const OUTER_LIMIT = 60_000;

const node = (name: string, script: string): SupervisedProcess => ({
  name,
  start: () => startProcess(name, process.execPath, ["-e", script], { cwd: tmpdir(), env: process.env, quiet: true }),
});
const RUNS = "setInterval(() => {}, 1000)";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves when `check` is true, polling; the test's outer limit bounds it. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 20));
}

const supervisors: Supervisor[] = [];
afterEach(async () => {
  await Promise.all(supervisors.splice(0).map((s) => s.stop()));
});

function supervise(specs: SupervisedProcess[], options: ConstructorParameters<typeof Supervisor>[1] = {}) {
  const s = new Supervisor(specs, { policy: FAST, graceMs: 2_000, ...options });
  supervisors.push(s);
  return s;
}

describe("Supervisor (npm start's restarts)", () => {
  it(
    "restarts a process killed with SIGKILL, after the policy's delay, and says why",
    async () => {
      const restarting: RestartEvent[] = [];
      let restarted: (pid: number | undefined) => void = () => {};
      const next = new Promise<number | undefined>((r) => {
        restarted = r;
      });
      const s = supervise([node("worker", RUNS), node("web", RUNS)], {
        onRestarting: (e) => restarting.push(e),
        onRestarted: (e) => restarted(e.pid),
      });
      const first = s.current("worker")?.child.pid as number;
      const web = s.current("web")?.child.pid as number;
      process.kill(first, "SIGKILL");
      const second = await next;
      expect(second).toBeDefined();
      expect(second).not.toBe(first);
      expect(alive(second as number)).toBe(true);
      expect(restarting).toEqual([
        { name: "worker", reason: { code: null, signal: "SIGKILL" }, delayMs: 10, restartsInWindow: 1 },
      ]);
      // The other process was left alone.
      expect(s.current("web")?.child.pid).toBe(web);
      expect(alive(web)).toBe(true);
    },
    OUTER_LIMIT,
  );

  it(
    "kills what a crashed process had started before starting it again (tsx runs the worker in a child)",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "supervisor-"));
      try {
        const pidFile = join(dir, "grandchild.pid");
        const script = `
          const { spawn } = require("node:child_process");
          const g = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
          require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(g.pid));
          setInterval(() => {}, 1000);`;
        let restarted = () => {};
        const next = new Promise<void>((r) => {
          restarted = r;
        });
        const s = supervise([node("worker", script)], { onRestarted: () => restarted() });
        await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8") !== "");
        const grandchild = Number(readFileSync(pidFile, "utf8"));
        rmSync(pidFile);
        process.kill(s.current("worker")?.child.pid as number, "SIGKILL");
        await next;
        await until(() => !alive(grandchild));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    OUTER_LIMIT,
  );

  it(
    "gives up after 5 restarts within 60 s, naming the process and how it last ended",
    async () => {
      let starts = 0;
      const crashing = node("worker", "process.exit(3)");
      const counted: SupervisedProcess = {
        name: "worker",
        start: () => {
          starts++;
          return crashing.start();
        },
      };
      // A clock that stands still: every crash falls within one window, however slow the machine.
      const s = supervise([counted], { now: () => 1_000_000 });
      const why = await s.gaveUp;
      expect(why).toBe(
        "worker crashed again: exit code 3; it was restarted 5 times within 60 s already, so it is not restarted again",
      );
      expect(starts).toBe(6);
    },
    OUTER_LIMIT,
  );

  it(
    "does not restart a process that exited cleanly on its own: it gives up and says so",
    async () => {
      const s = supervise([node("web", "process.exit(0)")]);
      expect(await s.gaveUp).toBe("web exited on its own (exit code 0)");
    },
    OUTER_LIMIT,
  );

  it(
    "stop() ends every process, SIGKILLs one that ignores SIGTERM, and restarts nothing",
    async () => {
      const restarts: string[] = [];
      const s = supervise(
        [node("worker", RUNS), node("web", `process.on("SIGTERM", () => {}); console.log("ready"); ${RUNS}`)],
        {
          graceMs: 300,
          onRestarting: (e) => restarts.push(e.name),
          onRestarted: (e) => restarts.push(e.name),
        },
      );
      const worker = s.current("worker") as Managed;
      const web = s.current("web") as Managed;
      // The web ignores SIGTERM once it says so.
      await new Promise((r) => web.child.stdout?.once("data", r));
      await s.stop();
      expect(await worker.exit).toEqual({ code: null, signal: "SIGTERM" });
      expect(await web.exit).toEqual({ code: null, signal: "SIGKILL" });
      expect(alive(worker.child.pid as number)).toBe(false);
      expect(alive(web.child.pid as number)).toBe(false);
      // A stopped supervisor's gaveUp never resolves, and nothing was restarted.
      const settled = await Promise.race([s.gaveUp.then(() => "gave up"), Promise.resolve("pending")]);
      expect(settled).toBe("pending");
      expect(restarts).toEqual([]);
    },
    OUTER_LIMIT,
  );
});

// The embedded Postgres `npm start` starts, watched like web and worker (watch-postgres.ts): a real
// server in a folder of its own, its postmaster killed by PID.
describe("the embedded Postgres, watched like web and worker", () => {
  const opened: { dir: string; db: DatabaseHandle; watch?: Supervisor }[] = [];
  afterEach(async () => {
    for (const { dir, db, watch } of opened.splice(0)) {
      await watch?.stop();
      await db.stop();
      const left = runningPostmaster(join(dir, "postgres"));
      if (left !== null) await stopPostmaster(left);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  async function embedded(policy: RestartPolicy) {
    const dir = mkdtempSync(join(tmpdir(), "supervisor-pg-"));
    // mkdtemp makes it private; the embedded Postgres runs as its own user when we are root.
    chmodSync(dir, 0o755);
    const db = await openDatabase({ databaseUrl: undefined, dataDir: dir, embeddedPort: await freePort() });
    const entry: (typeof opened)[number] = { dir, db };
    opened.push(entry);
    const lines: string[] = [];
    const watch = watchEmbeddedPostgres(db.embeddedServer as EmbeddedHandle, { log: (l) => lines.push(l), policy });
    entry.watch = watch;
    const pgDataDir = join(dir, "postgres");
    return { db, watch, lines, postmaster: () => runningPostmaster(pgDataDir) };
  }

  /** Kills the running postmaster by PID; resolves once another one serves the folder and answers a query. */
  async function killAndAwaitRestart(pg: Awaited<ReturnType<typeof embedded>>): Promise<number> {
    const before = pg.postmaster() as number;
    process.kill(before, "SIGKILL");
    await until(() => ![null, before].includes(pg.postmaster()));
    for (;;) {
      const answered = await checkReachable(pg.db.url, 2_000).then(
        () => true,
        () => false,
      );
      if (answered) return pg.postmaster() as number;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it(
    "restarts its postmaster after a SIGKILL, with the restart policy's delay, and says so in one line",
    async () => {
      const pg = await embedded(RESTART_POLICY);
      const first = pg.postmaster();
      expect(first).toBe(pg.db.embeddedServer?.postmaster().pid);
      const second = await killAndAwaitRestart(pg);
      expect(second).not.toBe(first);
      expect(second).toBe(pg.db.embeddedServer?.postmaster().pid);
      expect(pg.lines).toEqual([
        "the embedded Postgres crashed: killed by SIGKILL; restarting it in 1 s (restart 1 of at most 5 within 60 s)",
      ]);
    },
    OUTER_LIMIT,
  );

  it(
    "gives up in one line once the policy's restarts are used up",
    async () => {
      const pg = await embedded({ ...RESTART_POLICY, maxRestarts: 1 });
      await killAndAwaitRestart(pg);
      process.kill(pg.postmaster() as number, "SIGKILL");
      expect(await pg.watch.gaveUp).toBe(
        "the embedded Postgres crashed again: killed by SIGKILL; it was restarted 1 times within 60 s already, so it is not restarted again",
      );
      expect(pg.lines).toHaveLength(1);
      await until(() => pg.postmaster() === null);
    },
    OUTER_LIMIT,
  );
});
