import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterEach, describe, expect, it } from "vitest";

const t = useTestDatabase();
const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const mainPath = fileURLToPath(new URL("./main.ts", import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), "rh-worker-main-"));

/** Workers a test started; one still running after its test (it failed midway) is killed. */
const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** The worker as an operator runs it: a separate process with only the environment we give it. */
function startWorker(env: Record<string, string>) {
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
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  /** The first line that matches, whenever it was printed; the worker exiting first fails with its output. */
  const line = (match: (l: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = () => {
        const found = lines.find(match);
        if (found) {
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
  return { child, out, exited, line };
}

describe("worker main", () => {
  it("prints one clear line and exits 1 on a bad setting", async () => {
    const { out, exited } = startWorker({ DATABASE_URL: t.url, RHUMBATRON_EXECUTOR: "cloudflare" });
    expect(await exited).toBe(1);
    expect(out.stderr.trim().split("\n")).toHaveLength(1);
    expect(out.stderr).toMatch(/^rhumbatron worker: invalid settings: RHUMBATRON_EXECUTOR /);
    expect(out.stdout).toBe("");
  });

  it("says that DATABASE_URL is missing", async () => {
    const { out, exited } = startWorker({});
    expect(await exited).toBe(1);
    expect(out.stderr.trim().split("\n")).toHaveLength(1);
    expect(out.stderr).toContain("DATABASE_URL is not set");
  });

  it("refuses to start the inngest executor in cloud mode without a signing key", async () => {
    const { out, exited } = startWorker({ DATABASE_URL: t.url, RHUMBATRON_EXECUTOR: "inngest" });
    expect(await exited).toBe(1);
    expect(out.stderr).toMatch(
      /^rhumbatron worker: cannot start the inngest executor: INNGEST_SIGNING_KEY is required/,
    );
    expect(out.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("starts the local executor, beats, and stops cleanly with exit 0 on SIGTERM", async () => {
    // debug: a routine finished run (the heartbeat's start run waited for below) is a debug line.
    const { child, out, exited, line } = startWorker({ DATABASE_URL: t.url, RHUMBATRON_LOG_LEVEL: "debug" });
    const started = await line((l) => l.msg === "worker started");
    expect(started).toMatchObject({ executor: "local", level: 30 });
    await line((l) => l.function === "heartbeat" && l.trigger === "start");
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(out.stdout).toContain('"msg":"worker stopped"');
    expect(out.stderr).toBe("");
    const row = await t.db.workerHeartbeat.findUniqueOrThrow({ where: { workerId: String(started.workerId) } });
    // The process's own beat at start and the heartbeat function's start run (and its timer's,
    // every worker.heartbeatSeconds, on a slow machine).
    expect(row.executor).toBe("local");
    expect(row.beats).toBeGreaterThanOrEqual(2);
    // A clean stop says so: whatever it held is free for another worker at once.
    expect(row.stoppedAt).not.toBeNull();
  });
});
