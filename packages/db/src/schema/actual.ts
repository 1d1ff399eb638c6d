import pg from "pg";
import type { ForeignKeyShape, KeyShape, SchemaShape, TableShape } from "./shape.ts";

/** Reads the `public` schema of a live database into the shape the drift check compares. */

const ACTIONS: Record<string, string> = {
  a: "NO ACTION",
  r: "RESTRICT",
  c: "CASCADE",
  n: "SET NULL",
  d: "SET DEFAULT",
};

/** Turns a Postgres default expression into the drift check's normal form. */
export function normaliseDefault(expr: string | null): string | null {
  if (expr === null) return null;
  let e = expr.trim();
  if (/^nextval\(/i.test(e)) return "autoincrement";
  if (/^(CURRENT_TIMESTAMP|now\(\))$/i.test(e)) return "now";
  if (/^ARRAY\[\]::/i.test(e)) return "[]";
  // Strip trailing casts such as ::text, ::"TaskState", ::character varying[]
  for (;;) {
    const m = e.match(/^(.*)::(?:"[^"]+"|[a-z_ ][a-z0-9_ ]*)(?:\(\d+(?:,\d+)?\))?(?:\[\])?$/i);
    if (!m?.[1]) break;
    e = m[1].trim();
    if (e.startsWith("(") && e.endsWith(")")) e = e.slice(1, -1).trim();
  }
  if (/^'.*'$/s.test(e)) e = e.slice(1, -1).replace(/''/g, "'");
  return e;
}

export async function actualSchema(databaseUrl: string): Promise<SchemaShape> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables: Record<string, TableShape> = {};
    await readColumns(client, tables);
    await readIndexes(client, tables);
    await readForeignKeys(client, tables);
    const enums = await readEnums(client);
    return { tables, enums };
  } finally {
    await client.end();
  }
}

/** Every table with its columns (type, nullability, normal-form default). */
async function readColumns(client: pg.Client, tables: Record<string, TableShape>): Promise<void> {
  const cols = await client.query<{
    table: string;
    column: string;
    type: string;
    notnull: boolean;
    def: string | null;
  }>(`
      SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type,
             a.attnotnull AS notnull, pg_get_expr(d.adbin, d.adrelid) AS def
      FROM pg_attribute a
      JOIN pg_class c ON c.oid = a.attrelid AND c.relkind IN ('r', 'p')
      JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relname <> '_prisma_migrations'
      ORDER BY c.relname, a.attnum`);
  for (const r of cols.rows) {
    const table = tables[r.table] ?? { columns: {}, primaryKey: null, uniques: [], indexes: [], foreignKeys: [] };
    tables[r.table] = table;
    table.columns[r.column] = { type: r.type, nullable: !r.notnull, default: normaliseDefault(r.def) };
  }
}

/** Each table's primary key, unique indexes and other indexes. */
async function readIndexes(client: pg.Client, tables: Record<string, TableShape>): Promise<void> {
  const idx = await client.query<{
    table: string;
    name: string;
    columns: string[];
    primary: boolean;
    unique: boolean;
  }>(`
      SELECT t.relname AS table, i.relname AS name, x.indisprimary AS primary, x.indisunique AS unique,
             array(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY k(attnum, ord)
                   JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS columns
      FROM pg_index x
      JOIN pg_class i ON i.oid = x.indexrelid
      JOIN pg_class t ON t.oid = x.indrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
      WHERE t.relname <> '_prisma_migrations'`);
  for (const r of idx.rows) {
    const t = tables[r.table];
    if (!t) continue;
    const key: KeyShape = { name: r.name, columns: r.columns };
    if (r.primary) t.primaryKey = key;
    else if (r.unique) t.uniques.push(key);
    else t.indexes.push(key);
  }
}

/** Each table's foreign keys, with their ON DELETE and ON UPDATE actions. */
async function readForeignKeys(client: pg.Client, tables: Record<string, TableShape>): Promise<void> {
  const fks = await client.query<{
    table: string;
    name: string;
    columns: string[];
    ref_table: string;
    ref_columns: string[];
    del: string;
    upd: string;
  }>(`
      SELECT t.relname AS table, con.conname AS name, rt.relname AS ref_table,
             con.confdeltype AS del, con.confupdtype AS upd,
             array(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
                   JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS columns,
             array(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
                   JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS ref_columns
      FROM pg_constraint con
      JOIN pg_class t ON t.oid = con.conrelid
      JOIN pg_class rt ON rt.oid = con.confrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
      WHERE con.contype = 'f'`);
  for (const r of fks.rows) {
    const fk: ForeignKeyShape = {
      name: r.name,
      columns: r.columns,
      refTable: r.ref_table,
      refColumns: r.ref_columns,
      onDelete: ACTIONS[r.del] ?? r.del,
      onUpdate: ACTIONS[r.upd] ?? r.upd,
    };
    tables[r.table]?.foreignKeys.push(fk);
  }
}

/** Every enum type with its values in order. */
async function readEnums(client: pg.Client): Promise<Record<string, string[]>> {
  const enumRows = await client.query<{ name: string; values: string[] }>(`
      SELECT t.typname AS name, array_agg(e.enumlabel ORDER BY e.enumsortorder)::text[] AS values
      FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
      JOIN pg_namespace n ON n.oid = t.typnamespace AND n.nspname = 'public'
      GROUP BY t.typname`);
  return Object.fromEntries(enumRows.rows.map((r) => [r.name, r.values]));
}
