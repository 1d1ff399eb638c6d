import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { configFromSettings, demoPassword, parseSettings, publicUrl } from "@rhumbatron/core";
import { createDb, DEMO, migrate, pgNotifyNudger, seedDemo } from "@rhumbatron/db";
import { openDatabase } from "./database.ts";
import { StartupError } from "./fail.ts";
import { isPortFree } from "./ports.ts";
import { type Managed, startProcess, stopProcess, waitForHttp } from "./processes.ts";

export const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const WEB_DIR = join(ROOT, "apps/web");
const bin = (name: string) => join(ROOT, "node_modules/.bin", name);

export interface StackOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  embeddedPgPort: number;
  port: number;
  dev: boolean;
  env: NodeJS.ProcessEnv;
  /** Database name on the embedded server. */
  database?: string;
  persistentDb?: boolean;
  quiet?: boolean;
  log: (line: string) => void;
}

export interface Stack {
  url: string;
  databaseUrl: string;
  embeddedDb: boolean;
  /** The seeded demo admin; `password` is null when none was configured (prod). */
  demo: { email: string; password: string | null; projectId: string; signInUrl: string };
  /** Resolves when web or worker exits on its own. */
  crashed: Promise<string>;
  stop(): Promise<void>;
}

export function webBuildExists(): boolean {
  return existsSync(join(WEB_DIR, ".next", "BUILD_ID"));
}

export async function buildWeb(log: (line: string) => void, quiet = false): Promise<void> {
  log("building the web app (first start only) …");
  const p = startProcess("build", bin("next"), ["build"], {
    cwd: WEB_DIR,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
    quiet,
  });
  const code = await p.exited;
  if (code !== 0) throw new StartupError(`the web build failed (exit ${code}); run \`npm run build\` to see why`);
}

/** Postgres (embedded or given) -> migrations -> demo seed -> worker + web, waiting until web answers. */
export async function startStack(o: StackOptions): Promise<Stack> {
  if (!(await isPortFree(o.port))) {
    throw new StartupError(`port ${o.port} is in use; stop what is using it or set PORT to a free port`);
  }
  const gitPort = Number(o.env.RHUMBATRON_GIT_PORT ?? 3031);
  if (gitPort !== 0 && !(await isPortFree(gitPort))) {
    throw new StartupError(
      `port ${gitPort} for the git endpoint is in use; stop what is using it or set RHUMBATRON_GIT_PORT to a free port`,
    );
  }
  const db = await openDatabase({
    databaseUrl: o.databaseUrl,
    dataDir: o.dataDir,
    embeddedPort: o.embeddedPgPort,
    ...(o.database ? { database: o.database } : {}),
    ...(o.persistentDb !== undefined ? { persistent: o.persistentDb } : {}),
  });
  const children: Managed[] = [];
  const stop = async () => {
    await Promise.all(children.map((c) => stopProcess(c)));
    await db.stop();
  };
  try {
    const migrated = await migrate(db.url, { log: o.log });
    o.log(
      `database ready (${db.embedded ? "embedded" : "DATABASE_URL"}), ${migrated.total} migrations, ${migrated.applied.length} newly applied`,
    );
    const prisma = createDb(db.url, { maxConnections: 2 });
    const settings = parseSettings({ ...o.env, PORT: String(o.port) });
    const config = configFromSettings(settings);
    const seed = await seedDemo(
      prisma,
      { config, nudger: pgNotifyNudger, now: () => new Date() },
      { password: demoPassword(settings) },
    ).finally(() => prisma.$disconnect());
    if (!o.dev && !webBuildExists()) await buildWeb(o.log, o.quiet);

    const env = {
      ...o.env,
      DATABASE_URL: db.url,
      PORT: String(o.port),
      NEXT_TELEMETRY_DISABLED: "1",
      // Absolute: the web runs in apps/web and must read the same blobs and repositories the worker writes.
      RHUMBATRON_DATA_DIR: resolve(ROOT, o.dataDir),
    };
    const worker = startProcess("worker", bin("tsx"), [join(ROOT, "apps/worker/src/main.ts")], {
      cwd: ROOT,
      env,
      quiet: o.quiet,
    });
    children.push(worker);
    const web = startProcess("web", bin("next"), [o.dev ? "dev" : "start", "-p", String(o.port)], {
      cwd: WEB_DIR,
      env,
      quiet: o.quiet,
    });
    children.push(web);
    const crashed = Promise.race(children.map((c) => c.exited.then((code) => `${c.name} exited with code ${code}`)));
    const url = `http://localhost:${o.port}`;
    await waitForHttp(`${url}/api/health`, { timeoutMs: o.dev ? 120_000 : 60_000, abort: crashed });
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
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
