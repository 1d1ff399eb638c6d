import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDb, type EmbeddedServer, ensureDatabase, migrate, startEmbeddedPostgres } from "@rhumbatron/db";
import { freePort } from "@rhumbatron/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runFunction } from "./executors/run.ts";
import type { WorkerFunction } from "./functions/types.ts";
import { DatabaseOutage } from "./outage.ts";
import { startWorkerProcess } from "./test-process.ts";
import { captureLogs, testConfig, testIdentity } from "./testing.ts";

// A real worker process on an embedded Postgres this file starts, kills by PID and starts again in
// the same folder on the same port. Its log is counted: one line when the database goes, one when
// it is back, however many loops fail in between. Nothing waits on the clock: each step waits for
// the worker's own lines (at debug, it notes each failure it kept quiet).
const dir = mkdtempSync(join(tmpdir(), "rh-worker-outage-"));
// mkdtemp makes it private; the embedded Postgres runs as its own user when we are root.
chmodSync(dir, 0o755);
const pgDir = join(dir, "pg");
let port: number;
let server: EmbeddedServer | undefined;

const startServer = async () => {
  server = await startEmbeddedPostgres({ dataDir: pgDir, port, persistent: true });
  return server;
};

beforeAll(async () => {
  port = await freePort();
  const s = await startServer();
  await ensureDatabase(s.url("postgres"), "rhumbatron");
  await migrate(s.url("rhumbatron"));
}, 120_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

type Line = Record<string, unknown>;
const WARN = 40;
const msg = (l: Line) => String(l.msg);

describe("the worker while its database is down", () => {
  it("logs one line when the database goes and one when it is back, not one per loop per tick", async () => {
    const url = (server as EmbeddedServer).url("rhumbatron");
    const w = startWorkerProcess(
      { DATABASE_URL: url, RHUMBATRON_LOG_LEVEL: "debug", RHUMBATRON_EMBEDDED_DB: "1" },
      join(dir, "data"),
    );
    await w.line((l) => msg(l) === "worker started");
    const before = w.lines.length;
    const since = () => w.lines.slice(before);

    process.kill((server as EmbeddedServer).postmaster.pid as number, "SIGKILL");
    const [down] = await w.count((l) => msg(l).startsWith("database unreachable: "), 1);
    expect(msg(down as Line)).toMatch(
      new RegExp(`^database unreachable: the database at 127\\.0\\.0\\.1:${port} does not answer \\(.+\\), retrying$`),
    );
    // Several loops fail while it is down: the nudge listener's reconnects, the heartbeat timer.
    await w.count((l) => msg(l) === "database still unreachable", 6);

    await startServer();
    const [back] = await w.count((l) => msg(l).startsWith("database reachable again after "), 1);
    expect(msg(back as Line)).toMatch(/^database reachable again after \d+ s$/);
    // The work goes on: the listener is back (it drains every nudged function once).
    await w.line((l) => msg(l) === "nudge listener reconnected" && w.lines.indexOf(l) >= before);

    const loud = since().filter((l) => Number(l.level) >= WARN);
    expect(loud.map(msg)).toEqual([msg(down as Line)]);
    expect(since().filter((l) => msg(l).startsWith("database reachable again"))).toHaveLength(1);
    // What an operator sees at the default level: no Prisma output, no stack trace.
    const shown = since().filter((l) => Number(l.level) >= 30);
    expect(JSON.stringify(shown)).not.toMatch(/"stack"|Invalid `|"err"/);

    w.child.kill("SIGTERM");
    expect(await w.exited).toBe(0);
  }, 120_000);

  it("keeps logging every other failure as before, during an outage too", async () => {
    const logs = captureLogs();
    const outage = new DatabaseOutage({ logger: logs.logger, databaseAt: `127.0.0.1:${port}` });
    const up = createDb((server as EmbeddedServer).url("rhumbatron"));
    const down = createDb(`postgresql://rhumbatron:rhumbatron@127.0.0.1:${await freePort()}/rhumbatron`);
    const query = (id: string, run: () => Promise<unknown>): WorkerFunction => ({
      id,
      triggers: {},
      retries: 0,
      handler: run,
    });
    const missingTable = query("missing-table", () => up.$queryRawUnsafe("SELECT * FROM no_such_table"));
    const unreachable = query("unreachable", () => down.workerHeartbeat.findFirst());
    const deps = {
      db: up,
      config: testConfig,
      logger: logs.logger,
      worker: testIdentity(),
      now: () => new Date(),
      outage,
    };
    try {
      for (let tick = 0; tick < 3; tick++) {
        await runFunction(unreachable, deps, "default", "cron");
        await runFunction(missingTable, deps, "default", "cron");
      }
    } finally {
      await up.$disconnect();
      await down.$disconnect();
    }
    const loud = logs.lines.filter((l) => Number(l.level) >= WARN);
    expect(loud.filter((l) => msg(l).startsWith("database unreachable: "))).toHaveLength(1);
    const failed = loud.filter((l) => msg(l) === "run failed");
    expect(failed.map((l) => l.function)).toEqual(["missing-table", "missing-table", "missing-table"]);
    expect(loud).toHaveLength(4);
  });

  it("says in one line why it could not stop cleanly when the database is gone", async () => {
    const url = (server as EmbeddedServer).url("rhumbatron");
    const w = startWorkerProcess({ DATABASE_URL: url }, join(dir, "data"));
    await w.line((l) => msg(l) === "worker started");
    process.kill((server as EmbeddedServer).postmaster.pid as number, "SIGKILL");
    await w.line((l) => msg(l).startsWith("database unreachable: "));
    w.child.kill("SIGTERM");
    expect(await w.exited).toBe(1);
    await startServer();
    const errors = w.lines.filter((l) => Number(l.level) >= 50);
    expect(errors.map(msg), `the worker's stderr:\n${w.out.stderr}`).toEqual([
      expect.stringMatching(
        /^worker did not stop cleanly: the database does not answer \(.+\), so it could not record the stop; other workers take over its work after \d+ s$/,
      ),
    ]);
    expect(JSON.stringify(w.lines.filter((l) => Number(l.level) >= 30))).not.toMatch(/Invalid `|"stack"/);
  });
});
