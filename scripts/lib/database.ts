import type { ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { type EmbeddedServer, ensureDatabase, startEmbeddedPostgres } from "@rhumbatron/db";
import pg from "pg";
import { StartupError } from "./fail.ts";
import { isPortFree } from "./ports.ts";

export interface DatabaseHandle {
  url: string;
  embedded: boolean;
  /** Stops the embedded server running now (nothing for DATABASE_URL's). */
  stop(): Promise<void>;
  /** Only when the embedded Postgres is in use: the one this process started (scripts/lib/watch-postgres.ts). */
  embeddedServer?: EmbeddedHandle;
}

export interface EmbeddedHandle {
  /** Its data folder; `postmaster.pid` there names the server process serving it now. */
  pgDataDir: string;
  /** The server process this process started last. */
  postmaster(): ChildProcess;
  /** Starts the server again in the same folder on the same port (after it exited); its new process. */
  restart(): Promise<ChildProcess>;
}

/** Fails fast with a clear message when the server cannot be reached (never hangs). */
export async function checkReachable(url: string, timeoutMs = 5000): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const u = new URL(url);
    throw new StartupError(
      `cannot reach the database at ${u.hostname}:${u.port || 5432}/${u.pathname.slice(1)} (${reason}); ` +
        "check DATABASE_URL, or unset it to use the embedded Postgres",
    );
  } finally {
    await client.end().catch(() => {});
  }
}

/** The configured server when DATABASE_URL is set, otherwise the embedded one with its data in dataDir. */
export async function openDatabase(options: {
  databaseUrl: string | undefined;
  dataDir: string;
  embeddedPort: number;
  database?: string;
  persistent?: boolean;
  log?: (line: string) => void;
}): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    await checkReachable(options.databaseUrl);
    return { url: options.databaseUrl, embedded: false, stop: async () => {} };
  }
  if (!(await isPortFree(options.embeddedPort, "127.0.0.1"))) {
    throw new StartupError(
      `port ${options.embeddedPort} for the embedded Postgres is in use (is another Rhumbatron running?); ` +
        "stop it, or set RHUMBATRON_EMBEDDED_PG_PORT to a free port",
    );
  }
  const dataDir = resolve(join(options.dataDir, "postgres"));
  const start = () =>
    startEmbeddedPostgres({
      dataDir,
      port: options.embeddedPort,
      persistent: options.persistent ?? true,
      ...(options.log ? { onLog: options.log } : {}),
    });
  let server: EmbeddedServer;
  try {
    server = await start();
  } catch (err) {
    const reason = err instanceof Error && err.message ? err.message : "the server exited during start-up";
    throw new StartupError(
      `the embedded Postgres in ${dataDir} did not start (${reason}); see its log above, or remove that folder to start afresh`,
    );
  }
  const database = options.database ?? "rhumbatron";
  await ensureDatabase(server.url("postgres"), database);
  const exited = (p: ChildProcess) => p.exitCode !== null || p.signalCode !== null;
  return {
    url: server.url(database),
    embedded: true,
    // A server that has exited already would make the library wait for an exit event that never comes.
    stop: async () => (exited(server.postmaster) ? undefined : server.stop()),
    embeddedServer: {
      pgDataDir: dataDir,
      postmaster: () => server.postmaster,
      restart: async () => {
        server = await start();
        return server.postmaster;
      },
    },
  };
}
