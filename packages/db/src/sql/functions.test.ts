import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { readMigrations } from "../migrate.ts";
import { useTestDatabase } from "../testing/index.ts";

/**
 * The SQL functions live as readable files here, one per function (`<name>.sql`, its latest
 * definition); a migration applies each. The migrated database must hold exactly what the files
 * say: the file is run in a scratch schema and Postgres's own rendering of both definitions
 * (pg_get_functiondef) must agree. The migration each file names must carry its statement.
 */
const t = useTestDatabase();
const DIR = fileURLToPath(new URL(".", import.meta.url));
const files = readdirSync(DIR)
  .filter((f) => f.endsWith(".sql"))
  .map((f) => ({ name: f.slice(0, -".sql".length), text: readFileSync(join(DIR, f), "utf8") }));

/** The statement without comment lines, white space folded: how a copy in a migration is recognised. */
const folded = (sql: string) =>
  sql
    .split("\n")
    .filter((l) => !l.trimStart().startsWith("--"))
    .join("\n")
    .replace(/\s+/g, " ")
    .trim();

async function withClient<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: t.url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const DEFINITION = `
  SELECT p.proname AS name, pg_get_functiondef(p.oid) AS def
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname = $1 AND p.prokind = 'f' AND p.proname LIKE 'rhumbatron\\_%'
  ORDER BY p.proname`;

describe("the SQL function files", () => {
  it("are every function of ours the migrations create", async () => {
    const live = await withClient((c) => c.query<{ name: string }>(DEFINITION, ["public"]));
    expect(live.rows.map((r) => r.name)).toEqual(files.map((f) => f.name).sort());
  });

  for (const f of files) {
    it(`${f.name}: the migrated database holds the file's definition`, async () => {
      const [live, fromFile] = await withClient(async (c) => {
        const live = await c.query<{ name: string; def: string }>(DEFINITION, ["public"]);
        await c.query("BEGIN");
        try {
          await c.query("CREATE SCHEMA sql_file_probe; SET LOCAL search_path = sql_file_probe");
          await c.query(f.text);
          const probe = await c.query<{ name: string; def: string }>(DEFINITION, ["sql_file_probe"]);
          return [live.rows, probe.rows];
        } finally {
          await c.query("ROLLBACK");
        }
      });
      expect(fromFile.map((r) => r.name)).toEqual([f.name]);
      const def = fromFile[0]?.def.replace("FUNCTION sql_file_probe.", "FUNCTION public.");
      expect(def).toBe(live.find((r) => r.name === f.name)?.def);
    });

    it(`${f.name}: the migration the file names applies it`, () => {
      const named = /^-- Applied by prisma\/migrations\/([^/]+)\/migration\.sql/m.exec(f.text)?.[1];
      const migration = readMigrations().find((m) => m.name === named);
      expect(migration, `${f.name}.sql must name the migration that applies it`).toBeDefined();
      const statement = folded(f.text);
      const applied = folded(migration?.sql ?? "");
      // The first migration of a function may CREATE it; every later one copies the file as it is.
      const asFirst = statement.replace("CREATE OR REPLACE FUNCTION", "CREATE FUNCTION");
      expect(applied.includes(statement) || applied.includes(asFirst)).toBe(true);
      // No later migration touches the function without being the one the file names.
      const later = readMigrations().filter((m) => m.name > (named ?? "") && m.sql.includes(f.name));
      expect(later.map((m) => m.name)).toEqual([]);
    });
  }
});
