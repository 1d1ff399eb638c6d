import { createHash, randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DomainError } from "@rhumbatron/core";
import pg from "pg";

/**
 * Applies the SQL migrations in prisma/migrations the way `prisma migrate deploy` does, without
 * Prisma's schema engine (which cannot be downloaded on every machine this runs on):
 * - folders are applied in name order, each inside its own transaction;
 * - each is recorded in `_prisma_migrations` with Prisma's columns and checksum (SHA-256 hex of
 *   migration.sql), so a machine that does have the engine sees the same history;
 * - an applied migration whose file changed since is refused, as Prisma refuses it;
 * - the same advisory lock number as Prisma serialises concurrent runs.
 */

// Built from the module's own folder (not `new URL(folder, import.meta.url)`, which bundlers
// mistake for an import of that folder).
export const MIGRATIONS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../../prisma/migrations");

/** Prisma's migrate advisory lock key. */
const PRISMA_ADVISORY_LOCK = 72707369;

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
  total: number;
}

export function readMigrations(dir: string = MIGRATIONS_DIR): MigrationFile[] {
  const lock = join(dir, "migration_lock.toml");
  if (!existsSync(lock) || !/provider\s*=\s*"postgresql"/.test(readFileSync(lock, "utf8"))) {
    throw new DomainError("INVALID_CONFIG", `${lock} is missing or does not name provider "postgresql"`);
  }
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const file = join(dir, name, "migration.sql");
      if (!existsSync(file)) throw new DomainError("INVALID_CONFIG", `migration ${name} has no migration.sql`);
      const bytes = readFileSync(file);
      return { name, sql: bytes.toString("utf8"), checksum: createHash("sha256").update(bytes).digest("hex") };
    });
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export async function migrate(
  databaseUrl: string,
  options: { dir?: string; log?: (line: string) => void } = {},
): Promise<MigrateResult> {
  const migrations = readMigrations(options.dir);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [PRISMA_ADVISORY_LOCK]);
    await client.query(CREATE_TABLE);
    const { rows } = await client.query<AppliedRow>(
      `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
    );
    const byName = new Map(rows.map((r) => [r.migration_name, r]));
    for (const row of rows) {
      if (row.finished_at === null) {
        throw new DomainError(
          "PRECONDITION_FAILED",
          `migration ${row.migration_name} started but did not finish; inspect the database, then mark it rolled back`,
        );
      }
    }
    const applied: string[] = [];
    for (const m of migrations) {
      const done = byName.get(m.name);
      if (done) {
        if (done.checksum !== m.checksum) {
          throw new DomainError(
            "PRECONDITION_FAILED",
            `migration ${m.name} was changed after it was applied; add a new migration instead of editing it`,
          );
        }
        continue;
      }
      await client.query("BEGIN");
      try {
        const id = randomUUID();
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)`,
          [id, m.checksum, m.name],
        );
        await client.query(m.sql);
        await client.query(
          `UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`,
          [id],
        );
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        const reason = err instanceof Error ? err.message : String(err);
        throw new DomainError("PRECONDITION_FAILED", `migration ${m.name} failed and was rolled back: ${reason}`);
      }
      applied.push(m.name);
      options.log?.(`applied migration ${m.name}`);
    }
    return { applied, alreadyApplied: migrations.length - applied.length, total: migrations.length };
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [PRISMA_ADVISORY_LOCK]).catch(() => {});
    await client.end();
  }
}

/** How many migrations the database records as finished (0 when it has never been migrated). */
export async function countAppliedMigrations(query: (sql: string) => Promise<{ n: number }[]>): Promise<number> {
  const exists = await query(`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = '_prisma_migrations'`);
  if (!exists[0]?.n) return 0;
  const rows = await query(
    `SELECT count(*)::int AS n FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
  );
  return rows[0]?.n ?? 0;
}
