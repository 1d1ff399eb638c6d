import { readFileSync } from "node:fs";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../testing/index.ts";
import { actualSchema, normaliseDefault } from "./actual.ts";
import { expectedSchema, SCHEMA_PATH } from "./expected.ts";
import { diffSchemas } from "./shape.ts";

// The migrations are written by hand (Prisma's schema engine cannot run here), so this test is what
// keeps them honest: the database they build must be exactly what schema.prisma describes.
const t = useTestDatabase();
const schemaText = readFileSync(SCHEMA_PATH, "utf8");

async function exec(url: string, sql: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

describe("schema.prisma and the migrations agree", () => {
  it("has no drift", async () => {
    const diff = diffSchemas(expectedSchema(schemaText), await actualSchema(t.url));
    expect(diff).toEqual([]);
  });

  it("sees every model of schema.prisma as a table", async () => {
    const expected = expectedSchema(schemaText);
    expect(Object.keys(expected.tables)).toEqual(
      expect.arrayContaining(["changes", "memberships", "projects", "tasks", "tenants", "users", "outbox"]),
    );
    expect(Object.keys(expected.tables).sort()).toEqual(Object.keys((await actualSchema(t.url)).tables).sort());
    expect(expected.tables.tasks?.columns.dependencies).toEqual({ type: "text[]", nullable: true, default: "[]" });
  });

  it("fails when a column is added to schema.prisma without a migration", async () => {
    const edited = schemaText.replace("model Task {\n", "model Task {\n  priority Int @default(0)\n");
    const diff = diffSchemas(expectedSchema(edited), await actualSchema(t.url));
    expect(diff).toEqual(["tasks.priority is in schema.prisma but not in the database"]);
  });

  it("fails on a changed type, nullability, default, unique key, index or foreign key", async () => {
    const edited = schemaText
      .replace(/(model Change \{[\s\S]*?title\s+)String\n/, "$1String?\n")
      .replace(/(description\s+String\s+)@default\(""\)/, '$1@default("x")')
      .replace("@@unique([tenantId, name])", "")
      .replace("@@index([userId])", "")
      .replace(/(pid\s+)Int/, "$1BigInt")
      .replace(
        '@default("{\\"paths\\":[],\\"prefixes\\":[]}")',
        '@default("{\\"paths\\":[\\"x\\"],\\"prefixes\\":[]}")',
      )
      .replace(
        /(tenant\s+Tenant\s+@relation\(fields: \[tenantId\], references: \[id\], )onDelete: Restrict\)/,
        "$1onDelete: Cascade)",
      );
    expect(edited).not.toBe(schemaText);
    const diff = diffSchemas(expectedSchema(edited), await actualSchema(t.url));
    expect(diff).toContain("changes.title: nullable in schema.prisma, NOT NULL in the database");
    expect(diff).toContain('changes.description: default is "x" in schema.prisma, "" in the database');
    expect(diff.some((d) => d.startsWith("tasks.intents: default is"))).toBe(true);
    expect(diff).toContain("worker_heartbeats.pid: type is bigint in schema.prisma, integer in the database");
    expect(diff).toContain(
      "projects: unique projects_tenant_id_name_key(tenant_id,name) is in the database but not in schema.prisma",
    );
    expect(diff).toContain(
      "memberships: index memberships_user_id_idx(user_id) is in the database but not in schema.prisma",
    );
    expect(diff.some((d) => d.startsWith("projects: foreign key projects_tenant_id_fkey"))).toBe(true);
  });

  it("fails when the database has a column that schema.prisma lacks", async () => {
    await exec(t.url, `ALTER TABLE "tenants" ADD COLUMN "stray" TEXT`);
    try {
      const diff = diffSchemas(expectedSchema(schemaText), await actualSchema(t.url));
      expect(diff).toEqual(["tenants.stray is in the database but not in schema.prisma"]);
    } finally {
      await exec(t.url, `ALTER TABLE "tenants" DROP COLUMN "stray"`);
    }
  });
});

describe("normaliseDefault", () => {
  it.each([
    [null, null],
    ["CURRENT_TIMESTAMP", "now"],
    ["nextval('x_id_seq'::regclass)", "autoincrement"],
    ["ARRAY[]::text[]", "[]"],
    ["'pending'::\"TaskState\"", "pending"],
    ["''::text", ""],
    ["'it''s'::text", "it's"],
    ["0", "0"],
    ["false", "false"],
  ])("%s -> %s", (input, output) => {
    expect(normaliseDefault(input)).toBe(output);
  });
});
