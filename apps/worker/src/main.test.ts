import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { startWorkerProcess } from "./test-process.ts";

const t = useTestDatabase();
const dataDir = mkdtempSync(join(tmpdir(), "rh-worker-main-"));

const startWorker = (env: Record<string, string>) => startWorkerProcess(env, dataDir);

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
