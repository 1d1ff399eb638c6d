import type { Db } from "../client.ts";

/**
 * Every row of every table of the test database as text (each row cast to text by Postgres
 * itself), one line per row prefixed with its table, so a secret stored in any column of any
 * table, in any form Postgres prints, is found. Not pg_dump: the host's may be older than the
 * embedded server the tests run on.
 */
export async function dumpAllRows(db: Db): Promise<string> {
  const tables = await db.$queryRawUnsafe<{ name: string }[]>(
    "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) AS name FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
  );
  const rows: string[] = [];
  for (const { name } of tables) {
    const found = await db.$queryRawUnsafe<{ row: string }[]>(`SELECT t::text AS row FROM ${name} t`);
    rows.push(...found.map((r) => `${name} ${r.row}`));
  }
  return rows.join("\n");
}
