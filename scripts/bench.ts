/**
 * `npm run bench -- events`: throughput and latency of the event pipeline, each as a ratio to a
 * baseline measured in the same run on the same database (these machines are noisy).
 * Prints one JSON line per figure:
 *   (a) raw_insert_commits_per_s   single-row INSERT commits per second, 2 clients (the baseline)
 *   (b) domain_writes_per_s        state change + outbox row transactions per second, 2 writers
 *   (c) publisher_rows_per_s       outbox -> stream rows per second
 *   (d) e2e_latency_ms p50/p95/p99 writer commit -> projector applied, local executor with nudges
 * Uses DATABASE_URL's server (in a scratch database it drops afterwards) or an embedded Postgres.
 */

import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { buildEvent, loadConfig, stableEventId } from "@rhumbatron/core";
import {
  createDb,
  domainWrite,
  ensureDatabase,
  localFolderBlobStore,
  migrate,
  startEmbeddedPostgres,
} from "@rhumbatron/db";
import {
  appendToOutbox,
  type CommandHandler,
  consumeQueue,
  enqueueCommand,
  pgNotifyNudger,
  postgresStreamSink,
  publishDue,
  queueChannel,
  withTransaction,
} from "@rhumbatron/runtime";
import { buildFunctions, createLocalExecutor, createLogger, workerIdentity } from "@rhumbatron/worker";
import pg from "pg";
import { freePort } from "./lib/ports.ts";

const args = process.argv.slice(2);
const which = args.find((a) => !a.startsWith("--")) ?? "events";
/** `--hog`: two busy-loop processes run beside the bench, as on a machine with other work. */
const hog = args.includes("--hog");
if (!["events", "commands", "landing", "verification", "import", "peers", "scale"].includes(which)) {
  console.error(
    `unknown benchmark "${which}"; available: events, commands, landing, verification, import, peers, scale`,
  );
  process.exit(2);
}
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const config = loadConfig("dev");
const emit = (o: Record<string, unknown>) => console.log(JSON.stringify({ bench: which, ...o }));

async function openDatabase() {
  const name = `rhumbatron_bench_${randomBytes(4).toString("hex")}`;
  if (process.env.DATABASE_URL) {
    const admin = process.env.DATABASE_URL;
    await ensureDatabase(admin, name);
    const u = new URL(admin);
    u.pathname = `/${name}`;
    return {
      url: u.toString(),
      server: "DATABASE_URL",
      stop: async () => {
        const c = new pg.Client({ connectionString: admin });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await c.end();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), "rhumbatron-bench-"));
  chmodSync(dir, 0o755);
  const srv = await startEmbeddedPostgres({
    dataDir: join(dir, "pg"),
    port: await freePort(),
    persistent: false,
    database: name,
  });
  return {
    url: srv.url(name),
    server: "embedded",
    stop: async () => {
      await srv.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * With `--hog`, two processes spin (`for (;;) {}`) for the whole run, so the bench, Postgres and
 * the executor share the two cores with them. They are this run's own children, stopped by PID.
 */
async function withHogs(body: () => Promise<void>): Promise<void> {
  if (!hog) return body();
  const { spawn } = await import("node:child_process");
  const hogs = [0, 1].map(() => spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }));
  emit({ figure: "hog", processes: hogs.map((h) => h.pid) });
  const stop = () => {
    for (const h of hogs) if (h.exitCode === null) h.kill("SIGKILL");
  };
  process.once("exit", stop);
  try {
    await body();
  } finally {
    stop();
  }
}

async function forSeconds(
  clients: number,
  body: (client: number, i: number) => Promise<void>,
): Promise<{ n: number; ms: number }> {
  let n = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; performance.now() < end; i++) {
        await body(c, i);
        n++;
      }
    }),
  );
  return { n, ms: performance.now() - start };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function taskEvent(projectId: string, changeId: string, i: number) {
  return buildEvent({
    eventId: stableEventId(changeId, "task.ready", `t${i}`),
    eventType: "task.ready",
    tenantId: "ten_bench",
    projectId,
    changeId,
    taskId: `t${i}`,
    actor: { kind: "system", id: "bench" },
    resource: `change:${changeId}`,
    canonicalGeneration: 0,
    correlationId: changeId,
    timestamp: new Date(),
    payload: { key: `t${i}` },
  });
}

async function main() {
  const dbh = await openDatabase();
  await migrate(dbh.url);
  const db = createDb(dbh.url, { maxConnections: 6 });
  const deps = { config, nudger: pgNotifyNudger };
  try {
    await db.tenant.create({ data: { id: "ten_bench", slug: "bench", name: "Bench" } });
    const projects = Array.from({ length: 8 }, (_, i) => `proj_bench_${i}`);
    await db.project.createMany({
      data: projects.map((id) => ({ id, tenantId: "ten_bench", name: id, status: "active" })),
    });
    await db.change.createMany({
      data: projects.map((p) => ({
        id: `chg_${p}`,
        projectId: p,
        title: "bench",
        riskTier: "low",
        clientRequestId: p,
      })),
    });
    emit({ figure: "setup", server: dbh.server, seconds, cores: (await import("node:os")).cpus().length });

    // (a) raw ceiling
    const clients = await Promise.all(
      [0, 1].map(async () => {
        const c = new pg.Client({ connectionString: dbh.url });
        await c.connect();
        return c;
      }),
    );
    await clients[0]?.query("CREATE TABLE bench_raw (id bigserial primary key, v text not null)");
    const raw = await forSeconds(
      2,
      (c) => clients[c]?.query("INSERT INTO bench_raw (v) VALUES ($1)", ["x"]).then(() => {}) ?? Promise.resolve(),
    );
    await Promise.all(clients.map((c) => c.end()));
    const rawRate = (raw.n / raw.ms) * 1000;
    const rawCommitMs = (raw.ms / raw.n) * 2;
    emit({
      figure: "raw_insert_commits_per_s",
      value: Math.round(rawRate),
      ratio_to_raw: 1,
      mean_commit_ms: +rawCommitMs.toFixed(3),
    });

    // (b) domain writes: state change + one outbox row, one statement each (domainWrite)
    let seq = 0;
    const domain = await forSeconds(2, async (c) => {
      const p = projects[c] as string;
      const i = seq++;
      const w = await domainWrite(
        db,
        {
          table: "changes",
          id: `chg_${p}`,
          changeId: `chg_${p}`,
          projectId: p,
          expect: { status: "open" },
          set: { description: String(i) },
          events: [taskEvent(p, `chg_${p}`, i)],
        },
        deps,
      );
      if (!w.applied) throw new Error(`bench write ${i} did not apply`);
    });
    const domainRate = (domain.n / domain.ms) * 1000;
    emit({
      figure: "domain_writes_per_s",
      value: Math.round(domainRate),
      ratio_to_raw: +(domainRate / rawRate).toFixed(3),
    });

    // (c) publisher throughput: drain what (b) wrote
    const pending = await db.outboxRow.count({ where: { state: "pending" } });
    const t0 = performance.now();
    let published = 0;
    for (;;) {
      const r = await publishDue(db, {
        config,
        sink: postgresStreamSink,
        nudger: pgNotifyNudger,
        now: () => new Date(),
      });
      if (r.published === 0) break;
      published += r.published;
    }
    const pubMs = performance.now() - t0;
    const pubRate = (published / pubMs) * 1000;
    emit({
      figure: "publisher_rows_per_s",
      value: Math.round(pubRate),
      rows: published,
      of: pending,
      ratio_to_raw: +(pubRate / rawRate).toFixed(3),
      target_ratio: 0.25,
    });

    // (d) commit -> projector applied, with the local executor driven by nudges
    const logger = process.env.BENCH_DEBUG
      ? createLogger("debug", {
          write(line: string) {
            const l = JSON.parse(line) as { durationMs?: number };
            if ((l.durationMs ?? 0) > 100) process.stderr.write(line);
          },
        })
      : createLogger("silent");
    const blobDir = mkdtempSync(join(tmpdir(), "rhumbatron-bench-blobs-"));
    const functions = buildFunctions({ config, nudger: pgNotifyNudger, blobs: localFolderBlobStore(blobDir) }).filter(
      (f) => ["outbox-publisher", "event-router"].includes(f.id),
    );
    const executor = createLocalExecutor({
      db,
      databaseUrl: dbh.url,
      config,
      logger,
      worker: workerIdentity("local", new Date()),
      now: () => new Date(),
      functions,
      timers: { now: () => new Date(), setTimeout: () => 0, clearTimeout: () => {} },
    });
    await executor.start();
    await executor.idle();
    // Let every consumer of the router (projector, causal router, notifier, webhooks) catch up with
    // (b)'s backlog before measuring: each cursor at its stream's head. (Counting processed events
    // instead let the first samples wait behind the other consumers' backlog.)
    // (The audit archiver runs only on the cron sweep, which this bench has not: it is left out.)
    const consumers = ["project-view-projector", "causal-router", "notifier", "webhook-fanout"];
    const behind = async () =>
      (
        await db.$queryRaw<{ n: number }[]>`
          SELECT count(*)::int AS n FROM stream_heads h CROSS JOIN unnest(${consumers}::text[]) AS s(name)
          LEFT JOIN stream_cursors c ON c.stream_index = h.stream_index AND c.subscription = s.name
          WHERE coalesce(c.committed_offset, 0) < h.last_offset`
      )[0]?.n ?? 0;
    for (let i = 0; i < 600 && (await behind()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    const latencies: number[] = [];
    const samples = Number(process.env.BENCH_LATENCY_SAMPLES ?? 200);
    // Polled on a plain connection (a cheap query every 2 ms), so the measuring costs little.
    const poller = new pg.Client({ connectionString: dbh.url });
    await poller.connect();
    const publishedMs: number[] = [];
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    for (let i = 0; i < samples; i++) {
      const p = projects[i % projects.length] as string;
      const ev = taskEvent(p, `chg_${p}`, 1_000_000 + i);
      await withTransaction(db, (ctx) => appendToOutbox(ctx, [ev], deps));
      const committed = Date.now();
      for (let w = 0; w < 5000; w++) {
        const { rows } = await poller.query<{ applied: Date | null; published: Date | null }>(
          `SELECT pe.created_at AS applied, o.published_at AS published
           FROM outbox o LEFT JOIN project_events pe ON pe.event_id = o.event_id WHERE o.event_id = $1`,
          [ev.eventId],
        );
        const row = rows[0];
        if (row?.applied) {
          latencies.push(Math.max(0, row.applied.getTime() - committed));
          publishedMs.push(Math.max(0, (row.published?.getTime() ?? committed) - committed));
          if (process.env.BENCH_DEBUG && row.applied.getTime() - committed > 200)
            console.error(
              JSON.stringify({
                slow: row.applied.getTime() - committed,
                published: (row.published?.getTime() ?? 0) - committed,
              }),
            );
          break;
        }
        await new Promise((r) => setTimeout(r, 2));
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    loop.disable();
    await poller.end();
    await executor.stop();
    rmSync(blobDir, { recursive: true, force: true });
    latencies.sort((x, y) => x - y);
    publishedMs.sort((x, y) => x - y);
    for (const p of [50, 95, 99]) {
      const v = percentile(latencies, p);
      emit({
        figure: `e2e_latency_ms_p${p}`,
        value: v,
        samples: latencies.length,
        of: samples,
        hog,
        commit_to_published_ms: percentile(publishedMs, p),
        event_loop_delay_ms: +(loop.percentile(p) / 1e6).toFixed(1),
        ratio_to_raw_commit: +(v / rawCommitMs).toFixed(2),
        target_ms: p === 50 ? 50 : p === 99 ? (hog ? 250 : 150) : null,
      });
    }
  } finally {
    await db.$disconnect();
    await dbh.stop();
  }
}

async function rawBaseline(url: string) {
  const clients = await Promise.all(
    [0, 1].map(async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  await clients[0]?.query("CREATE TABLE IF NOT EXISTS bench_raw (id bigserial primary key, v text not null)");
  const raw = await forSeconds(
    2,
    (c) => clients[c]?.query("INSERT INTO bench_raw (v) VALUES ($1)", ["x"]).then(() => {}) ?? Promise.resolve(),
  );
  await Promise.all(clients.map((c) => c.end()));
  const rate = (raw.n / raw.ms) * 1000;
  const commitMs = (raw.ms / raw.n) * 2;
  emit({
    figure: "raw_insert_commits_per_s",
    value: Math.round(rate),
    ratio_to_raw: 1,
    mean_commit_ms: +commitMs.toFixed(3),
  });
  return { rate, commitMs };
}

/**
 * Commands: (a) the raw ceiling again, (b) no-op commands enqueued per second (one transaction
 * each, 2 writers), (c) consumed per second through one consumer, (d) enqueue commit -> handler
 * start, p50/p95/p99, with the local executor and nudges.
 */
async function commandsBench() {
  const dbh = await openDatabase();
  await migrate(dbh.url);
  const db = createDb(dbh.url, { maxConnections: 6 });
  try {
    await db.tenant.create({ data: { id: "ten_bench", slug: "bench", name: "Bench" } });
    await db.project.create({ data: { id: "proj_bench", tenantId: "ten_bench", name: "bench", status: "active" } });
    emit({ figure: "setup", server: dbh.server, seconds });
    const raw = await rawBaseline(dbh.url);
    const deps = { config, nudger: pgNotifyNudger, now: () => new Date(), owner: "bench" };
    let n = 0;
    const enq = await forSeconds(2, async () => {
      const i = n++;
      await withTransaction(db, (ctx) =>
        enqueueCommand(
          ctx,
          { commandId: `cmd_bench_${i}`, commandType: "project.provision", projectId: "proj_bench", payload: {} },
          deps,
        ),
      );
    });
    const enqRate = (enq.n / enq.ms) * 1000;
    emit({
      figure: "commands_enqueued_per_s",
      value: Math.round(enqRate),
      ratio_to_raw: +(enqRate / raw.rate).toFixed(3),
    });

    const noop: CommandHandler = { commandTypes: ["project.provision"], handle: async () => "done" };
    const backlog = await db.queueMessage.count();
    const t0 = performance.now();
    let consumed = 0;
    for (;;) {
      const r = await consumeQueue(db, "integration", [noop], deps);
      if (r.leased === 0) break;
      consumed += r.actions.ack;
    }
    const conRate = (consumed / (performance.now() - t0)) * 1000;
    emit({
      figure: "commands_consumed_per_s",
      value: Math.round(conRate),
      of: backlog,
      consumers: 1,
      batch: config.queues.policies.integration.batchSize,
      ratio_to_raw: +(conRate / raw.rate).toFixed(3),
      target: 3000,
    });

    const started = new Map<string, number>();
    const handler: CommandHandler = {
      commandTypes: ["project.provision"],
      handle: async (ctx) => {
        started.set(ctx.command.commandId, Date.now());
        return "done";
      },
    };
    const consumerFn = {
      id: "bench-consumer",
      triggers: { nudge: queueChannel("integration") },
      retries: 0,
      handler: async () => consumeQueue(db, "integration", [handler], deps),
    };
    const executor = createLocalExecutor({
      db,
      databaseUrl: dbh.url,
      config,
      logger: createLogger("silent"),
      worker: workerIdentity("local", new Date()),
      now: () => new Date(),
      functions: [consumerFn],
      timers: { now: () => new Date(), setTimeout: () => 0, clearTimeout: () => {} },
    });
    await executor.start();
    await executor.idle();
    const latencies: number[] = [];
    const samples = Number(process.env.BENCH_LATENCY_SAMPLES ?? 200);
    for (let i = 0; i < samples; i++) {
      const id = `cmd_lat_${i}`;
      await withTransaction(db, (ctx) =>
        enqueueCommand(
          ctx,
          { commandId: id, commandType: "project.provision", projectId: "proj_bench", payload: {} },
          deps,
        ),
      );
      const committed = Date.now();
      for (let w = 0; w < 2000 && !started.has(id); w++) await new Promise((r) => setTimeout(r, 1));
      const at = started.get(id);
      if (at !== undefined) latencies.push(Math.max(0, at - committed));
      await new Promise((r) => setTimeout(r, 5));
    }
    await executor.stop();
    latencies.sort((x, y) => x - y);
    for (const p of [50, 95, 99]) {
      const v = percentile(latencies, p);
      emit({
        figure: `enqueue_to_handler_ms_p${p}`,
        value: v,
        samples: latencies.length,
        ratio_to_raw_commit: +(v / raw.commitMs).toFixed(2),
        target_ms: p === 50 ? 50 : p === 99 ? 250 : null,
      });
    }
  } finally {
    await db.$disconnect();
    await dbh.stop();
  }
}

const run =
  which === "peers"
    ? () => import("./bench-peers.ts").then((m) => m.peersBench(openDatabase, emit, rawBaseline, forSeconds))
    : which === "import"
      ? () => import("./bench-import.ts").then((m) => m.importBench(openDatabase, emit))
      : which === "verification"
        ? () => import("./bench-verification.ts").then((m) => m.verificationBench(openDatabase, emit))
        : which === "landing"
          ? () => import("./bench-landing.ts").then((m) => m.landingBench(openDatabase, emit))
          : which === "scale"
            ? () => import("./bench-scale.ts").then((m) => m.scaleBench(openDatabase, emit))
            : which === "commands"
              ? commandsBench
              : main;
withHogs(run).catch((err) => {
  console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
