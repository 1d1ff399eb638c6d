import { join, resolve } from "node:path";
import { type EmbeddedServer, ensureDatabase, startEmbeddedPostgres } from "@rhumbatron/db";
import pg from "pg";
import { StartupError } from "./fail.ts";
import { isPortFree } from "./ports.ts";

export interface DatabaseHandle {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
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
  let server: EmbeddedServer;
  try {
    server = await startEmbeddedPostgres({
      dataDir,
      port: options.embeddedPort,
      persistent: options.persistent ?? true,
      ...(options.log ? { onLog: options.log } : {}),
    });
  } catch (err) {
    const reason = err instanceof Error && err.message ? err.message : "the server exited during start-up";
    throw new StartupError(
      `the embedded Postgres in ${dataDir} did not start (${reason}); see its log above, or remove that folder to start afresh`,
    );
  }
  const database = options.database ?? "rhumbatron";
  await ensureDatabase(server.url("postgres"), database);
  return { url: server.url(database), embedded: true, stop: () => server.stop() };
}
