import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../embedded.ts";
import { migrate, readMigrations } from "../migrate.ts";

/**
 * The Postgres server a test run uses: the one in DATABASE_URL when set, otherwise one embedded
 * instance for the whole run. A migrated template database, named by a hash of the migrations, is
 * made once; each test file then gets its own copy (`CREATE DATABASE … TEMPLATE …`), which is fast.
 */
export interface TestServer {
  /** URL of a database on the server with rights to create databases. */
  adminUrl: string;
  template: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

export function databaseUrl(adminUrl: string, database: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

export function migrationsHash(): string {
  const h = createHash("sha256");
  for (const m of readMigrations()) h.update(`${m.name}:${m.checksum}\n`);
  return h.digest("hex").slice(0, 12);
}

export async function adminQuery<T extends pg.QueryResultRow>(adminUrl: string, sql: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await client.query<T>(sql, params);
  } finally {
    await client.end();
  }
}

export async function startTestServer(): Promise<TestServer> {
  let adminUrl: string;
  let stopServer = async () => {};
  const external = process.env.DATABASE_URL;
  if (external) {
    adminUrl = external;
  } else {
    const dataDir = mkdtempSync(join(tmpdir(), "rhumbatron-test-pg-"));
    const server = await startEmbeddedPostgres({ dataDir, port: await freePort(), persistent: false });
    adminUrl = server.url("postgres");
    stopServer = async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    };
  }
  const template = `rhumbatron_tpl_${migrationsHash()}`;
  await dropLeftovers(adminUrl, template);
  const exists = await adminQuery(adminUrl, "SELECT 1 FROM pg_database WHERE datname = $1", [template]);
  if (!exists.rowCount) {
    // Build under a temporary name and rename, so a crashed run never leaves a half-migrated template.
    const building = `${template}_b${process.pid}`;
    await adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${building}"`);
    await adminQuery(adminUrl, `CREATE DATABASE "${building}"`);
    await migrate(databaseUrl(adminUrl, building));
    await adminQuery(adminUrl, `ALTER DATABASE "${building}" RENAME TO "${template}"`).catch(async (err) => {
      await adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${building}"`);
      const again = await adminQuery(adminUrl, "SELECT 1 FROM pg_database WHERE datname = $1", [template]);
      if (!again.rowCount) throw err;
    });
  }
  // When this run last used the template: another checkout's run (other migrations, so another
  // template) on the same server leaves it alone while it is recent.
  await adminQuery(adminUrl, `COMMENT ON DATABASE "${template}" IS 'used ${new Date().toISOString()}'`);
  return { adminUrl, template, stop: stopServer };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A template another run used within this long may still be copied by it: it is kept. */
const TEMPLATE_KEEP_MS = 6 * 3600_000;

/**
 * A shared server keeps what earlier runs left: templates of older migration sets, and databases
 * of test processes that were killed. Drop those (never a database whose process still runs, nor a
 * template another run used in the last hours: two checkouts may test on one server at once).
 */
async function dropLeftovers(adminUrl: string, template: string): Promise<void> {
  const { rows } = await adminQuery<{ datname: string; note: string | null }>(
    adminUrl,
    "SELECT datname, shobj_description(oid, 'pg_database') AS note FROM pg_database WHERE datname LIKE 'rhumbatron\\_%'",
  );
  for (const { datname, note } of rows) {
    const test = /^rhumbatron_(?:test|mig|e2e|bench)_(\d+)_/.exec(datname);
    const usedAt = Date.parse(/^used (.+)$/.exec(note ?? "")?.[1] ?? "");
    const recent = Number.isFinite(usedAt) && Date.now() - usedAt < TEMPLATE_KEEP_MS;
    const staleTemplate = /^rhumbatron_tpl_[0-9a-f]{12}$/.test(datname) && datname !== template && !recent;
    if (staleTemplate || (test && !alive(Number(test[1])))) {
      await adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => {});
    }
  }
}

/** A fresh migrated database copied from the template; retried because copies of one template serialise. */
export async function createTestDatabase(adminUrl: string, template: string, name: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      await adminQuery(adminUrl, `CREATE DATABASE "${name}" TEMPLATE "${template}"`);
      return databaseUrl(adminUrl, name);
    } catch (err) {
      const busy = err instanceof Error && /being accessed by other users/.test(err.message);
      if (!busy || attempt >= 50) throw err;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}
