import { DomainError } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { withTransaction } from "../transaction.ts";

/**
 * The database half of a backup (docs/production.md, "Backup and restore"): every table of the
 * schema as JSON rows, read in one REPEATABLE READ transaction, so the rows are one moment of the
 * installation; and their restore into a fresh, migrated database in one transaction. The
 * repositories and blobs are copied after the rows were read (scripts/lib/backup.ts): they only
 * grow, so they hold everything the rows name, and a restore moves each project's main back to
 * the last generation the rows record.
 */
export interface TableDump {
  table: string;
  /** One JSON object per row (row_to_json). */
  rows: string[];
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;
const quoted = (table: string) => {
  if (!IDENTIFIER.test(table)) throw new DomainError("INVALID_INPUT", `not a table name: ${table}`);
  return `"${table}"`;
};

/** Every table of the public schema, with its rows, as of one moment. */
export async function exportTables(db: Db): Promise<TableDump[]> {
  return withTransaction(
    db,
    async (ctx) => {
      await ctx.tx.$executeRawUnsafe("SET TRANSACTION READ ONLY");
      const tables = await ctx.tx.$queryRaw<{ tablename: string }[]>`
        SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`;
      const out: TableDump[] = [];
      for (const { tablename } of tables) {
        const rows = await ctx.tx.$queryRawUnsafe<{ j: string }[]>(
          `SELECT row_to_json(t)::text AS j FROM ${quoted(tablename)} t`,
        );
        out.push({ table: tablename, rows: rows.map((r) => r.j) });
      }
      return out;
    },
    { isolationLevel: "RepeatableRead", timeoutMs: 600_000 },
  );
}

/**
 * Writes a backup's rows into this database, which must be migrated (the backup's migrations all
 * applied) and hold no project yet. One transaction; foreign keys are checked at its end only
 * (session_replication_role), so tables load in any order. Sequences continue after the rows.
 */
export async function importTables(db: Db, dumps: readonly TableDump[]): Promise<Record<string, number>> {
  const applied = new Set(
    (await db.$queryRaw<{ migration_name: string }[]>`SELECT migration_name FROM _prisma_migrations`).map(
      (r) => r.migration_name,
    ),
  );
  const theirs = dumps.find((d) => d.table === "_prisma_migrations")?.rows ?? [];
  const missing = theirs
    .map((r) => (JSON.parse(r) as { migration_name: string }).migration_name)
    .filter((m) => !applied.has(m));
  if (missing.length > 0) {
    throw new DomainError("PRECONDITION_FAILED", `migrate this database first: it lacks ${missing.join(", ")}`);
  }
  const [{ n = 0 } = {}] = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM projects`;
  if (n > 0)
    throw new DomainError("PRECONDITION_FAILED", "restore goes into a fresh installation: this one has projects");
  return withTransaction(
    db,
    async (ctx) => {
      await ctx.tx.$executeRawUnsafe("SET LOCAL session_replication_role = replica");
      const counts: Record<string, number> = {};
      for (const d of dumps) {
        if (d.table === "_prisma_migrations") continue;
        const table = quoted(d.table);
        await ctx.tx.$executeRawUnsafe(`DELETE FROM ${table}`);
        for (let i = 0; i < d.rows.length; i += 500) {
          const batch = `[${d.rows.slice(i, i + 500).join(",")}]`;
          await ctx.tx.$executeRawUnsafe(
            `INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::json)`,
            batch,
          );
        }
        counts[d.table] = d.rows.length;
      }
      // The restored workers ran on the old installation: what they held is free at once here.
      await ctx.tx.$executeRawUnsafe("UPDATE worker_heartbeats SET stopped_at = now() WHERE stopped_at IS NULL");
      // Serial columns continue after the restored rows.
      await ctx.tx.$executeRawUnsafe(`
        DO $$ DECLARE r record; BEGIN
          FOR r IN SELECT c.table_name, c.column_name, pg_get_serial_sequence(quote_ident(c.table_name), c.column_name) AS seq
            FROM information_schema.columns c
            WHERE c.table_schema = 'public' AND c.column_default LIKE 'nextval(%'
          LOOP
            EXECUTE format('SELECT setval(%L, GREATEST((SELECT COALESCE(max(%I), 0) FROM %I), 1), (SELECT count(*) > 0 FROM %I))',
              r.seq, r.column_name, r.table_name, r.table_name);
          END LOOP;
        END $$`);
      return counts;
    },
    { timeoutMs: 600_000 },
  );
}

/** Each project's last generation as the rows record it: where its main must point. */
export async function lastGenerations(db: Db): Promise<{ projectId: string; generation: number; commit: string }[]> {
  return db.$queryRaw`
    SELECT g.project_id AS "projectId", g.generation, g.commit
    FROM canonical_generations g JOIN projects p ON p.id = g.project_id AND p.canonical_generation = g.generation
    ORDER BY g.project_id`;
}
