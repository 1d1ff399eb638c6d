import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDomainError } from "@rhumbatron/core";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { migrate, readMigrations } from "./migrate.ts";
import { adminQuery, databaseUrl, dropDatabase } from "./testing/index.ts";

const created: string[] = [];
async function emptyDatabase(): Promise<string> {
  const name = `rhumbatron_mig_${randomBytes(4).toString("hex")}`;
  await adminQuery(inject("pgAdminUrl"), `CREATE DATABASE "${name}"`);
  created.push(name);
  return databaseUrl(inject("pgAdminUrl"), name);
}
afterAll(async () => {
  for (const name of created) await dropDatabase(inject("pgAdminUrl"), name);
});

function migrationsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "rhumbatron-migrations-"));
  writeFileSync(join(dir, "migration_lock.toml"), 'provider = "postgresql"\n');
  for (const [name, sql] of Object.entries(files)) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, "migration.sql"), sql);
  }
  return dir;
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql)).rows;
  } finally {
    await c.end();
  }
}

describe("migrate", () => {
  it("applies the repository's migrations in order and records them as Prisma does", async () => {
    const url = await emptyDatabase();
    const result = await migrate(url);
    const files = readMigrations();
    expect(result.applied).toEqual(files.map((f) => f.name));
    const rows = await query<{
      id: string;
      checksum: string;
      migration_name: string;
      finished_at: Date | null;
      applied_steps_count: number;
      rolled_back_at: Date | null;
      logs: string | null;
    }>(url, `SELECT * FROM "_prisma_migrations" ORDER BY started_at, migration_name`);
    expect(rows.map((r) => r.migration_name)).toEqual(files.map((f) => f.name));
    for (const r of rows) {
      expect(r.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.finished_at).toBeInstanceOf(Date);
      expect(r.applied_steps_count).toBe(1);
      expect(r.rolled_back_at).toBeNull();
      expect(r.logs).toBeNull();
    }
    const first = files[0];
    if (!first) throw new Error("no migrations");
    expect(first.checksum).toBe(createHash("sha256").update(first.sql).digest("hex"));
    expect(rows[0]?.checksum).toBe(first.checksum);
    const again = await migrate(url);
    expect(again).toEqual({ applied: [], alreadyApplied: files.length, total: files.length });
  });

  it("applies only pending migrations", async () => {
    const url = await emptyDatabase();
    const one = { "001_a": "CREATE TABLE a (id int);" };
    await migrate(url, { dir: migrationsDir(one) });
    const result = await migrate(url, { dir: migrationsDir({ ...one, "002_b": "CREATE TABLE b (id int);" }) });
    expect(result.applied).toEqual(["002_b"]);
  });

  it("rolls back a failing migration completely and records nothing for it", async () => {
    const url = await emptyDatabase();
    const dir = migrationsDir({
      "001_ok": "CREATE TABLE ok (id int);",
      "002_bad": "CREATE TABLE half (id int);\nSELECT nope FROM missing;",
    });
    const err = await migrate(url, { dir }).catch((e: unknown) => e);
    expect(isDomainError(err) && err.code).toBe("PRECONDITION_FAILED");
    expect((err as Error).message).toMatch(/002_bad failed and was rolled back/);
    const tables = await query<{ tablename: string }>(
      url,
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    );
    expect(tables.map((t) => t.tablename)).toEqual(["_prisma_migrations", "ok"]);
    const recorded = await query<{ migration_name: string }>(url, `SELECT migration_name FROM "_prisma_migrations"`);
    expect(recorded.map((r) => r.migration_name)).toEqual(["001_ok"]);
  });

  it("refuses a migration that was edited after it was applied", async () => {
    const url = await emptyDatabase();
    await migrate(url, { dir: migrationsDir({ "001_a": "CREATE TABLE a (id int);" }) });
    const err = await migrate(url, { dir: migrationsDir({ "001_a": "CREATE TABLE a (id bigint);" }) }).catch(
      (e: unknown) => e,
    );
    expect((err as Error).message).toMatch(/001_a was changed after it was applied/);
  });

  it("lets concurrent runs apply each migration once", async () => {
    const url = await emptyDatabase();
    const dir = migrationsDir({ "001_a": "CREATE TABLE a (id int);", "002_b": "CREATE TABLE b (id int);" });
    const [x, y] = await Promise.all([migrate(url, { dir }), migrate(url, { dir })]);
    expect([...x.applied, ...y.applied].sort()).toEqual(["001_a", "002_b"]);
  });

  it("refuses a folder without a postgresql migration_lock.toml", () => {
    const dir = mkdtempSync(join(tmpdir(), "rhumbatron-migrations-"));
    expect(() => readMigrations(dir)).toThrow(/migration_lock.toml/);
  });
});
