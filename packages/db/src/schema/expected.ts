import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { SchemaShape, TableShape } from "./shape.ts";

/**
 * Reads prisma/schema.prisma through Prisma's own schema parser (the WebAssembly build that ships
 * on npm, so no engine binary is needed) and describes the Postgres schema that `prisma migrate`
 * would create for it: tables, columns (type, nullability, default), primary keys, unique and
 * plain indexes, foreign keys and enums.
 */

export const SCHEMA_PATH = resolve(fileURLToPath(new URL("../../../../prisma/schema.prisma", import.meta.url)));

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: "scalar" | "enum" | "object" | "unsupported";
  isList: boolean;
  isRequired: boolean;
  isUpdatedAt: boolean;
  hasDefaultValue: boolean;
  type: string;
  nativeType: [string, string[]] | null;
  default?: unknown;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
interface DmmfIndex {
  model: string;
  type: "id" | "unique" | "normal" | "fulltext";
  dbName?: string | null;
  fields: { name: string }[];
}
interface DmmfEnum {
  name: string;
  dbName: string | null;
  values: { name: string; dbName: string | null }[];
}
interface Dmmf {
  datamodel: { models: DmmfModel[]; enums: DmmfEnum[]; indexes: DmmfIndex[] };
}

const require = createRequire(import.meta.url);

export function readDmmf(schemaText: string): Dmmf {
  const wasm = require("@prisma/prisma-schema-wasm") as { get_dmmf(params: string): string };
  return JSON.parse(wasm.get_dmmf(JSON.stringify({ prismaSchema: schemaText }))) as Dmmf;
}

const SCALAR_TYPES: Record<string, string> = {
  String: "text",
  Int: "integer",
  BigInt: "bigint",
  Float: "double precision",
  Decimal: "numeric(65,30)",
  Boolean: "boolean",
  DateTime: "timestamp(3) without time zone",
  Json: "jsonb",
  Bytes: "bytea",
};

function nativeTypeName([name, args]: [string, string[]]): string {
  const a = args.length ? `(${args.join(",")})` : "";
  switch (name) {
    case "VarChar":
      return `character varying${a}`;
    case "Char":
      return `character${a}`;
    case "Timestamptz":
      return `timestamp${a || "(6)"} with time zone`;
    case "Timestamp":
      return `timestamp${a || "(6)"} without time zone`;
    case "Time":
      return `time${a || "(6)"} without time zone`;
    case "Timetz":
      return `time${a || "(6)"} with time zone`;
    case "Decimal":
      return `numeric${a}`;
    case "DoublePrecision":
      return "double precision";
    case "JsonB":
      return "jsonb";
    case "ByteA":
      return "bytea";
    case "SmallInt":
    case "Integer":
    case "BigInt":
    case "Real":
    case "Text":
    case "Uuid":
    case "Date":
    case "Boolean":
    case "Inet":
    case "Json":
    case "Xml":
      return { SmallInt: "smallint", Integer: "integer", BigInt: "bigint" }[name as "SmallInt"] ?? name.toLowerCase();
    default:
      return `${name.toLowerCase()}${a}`;
  }
}

function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name}"`;
}

function expectedDefault(f: DmmfField): string | null {
  if (!f.hasDefaultValue || f.default === undefined) return null;
  const d = f.default as { name?: string; args?: unknown[] } | unknown;
  if (Array.isArray(d)) return d.length === 0 ? "[]" : `{${d.map(String).join(",")}}`;
  if (d !== null && typeof d === "object" && "name" in d) {
    const fn = d as { name: string; args?: unknown[] };
    if (fn.name === "now") return "now";
    if (fn.name === "autoincrement") return "autoincrement";
    if (fn.name === "dbgenerated") return String(fn.args?.[0] ?? "");
    return null; // uuid(), cuid(), nanoid(): filled in by the client, no database default
  }
  return String(d);
}

/** Prisma's default constraint and index names: table_columns_suffix, cut to Postgres's 63 bytes. */
function defaultName(table: string, columns: string[], suffix: string): string {
  if (suffix === "pkey") return `${table}_pkey`.slice(0, 63);
  const base = `${table}_${columns.join("_")}`;
  const max = 63 - suffix.length - 1;
  return `${base.slice(0, max)}_${suffix}`;
}

export function expectedSchema(schemaText: string = readFileSync(SCHEMA_PATH, "utf8")): SchemaShape {
  const { datamodel } = readDmmf(schemaText);
  const enums: SchemaShape["enums"] = {};
  for (const e of datamodel.enums) enums[e.dbName ?? e.name] = e.values.map((v) => v.dbName ?? v.name);
  const enumDbName = (name: string) => {
    const e = datamodel.enums.find((x) => x.name === name);
    return e?.dbName ?? e?.name ?? name;
  };
  const models = new Map(datamodel.models.map((m) => [m.name, m]));
  const tableOf = (m: DmmfModel) => m.dbName ?? m.name;
  const columnOf = (m: DmmfModel, field: string) => {
    const f = m.fields.find((x) => x.name === field);
    return f?.dbName ?? field;
  };

  const tables: Record<string, TableShape> = {};
  for (const m of datamodel.models) {
    const table = tableOf(m);
    const t: TableShape = { columns: {}, primaryKey: null, uniques: [], indexes: [], foreignKeys: [] };
    for (const f of m.fields) {
      if (f.kind === "object") {
        if (f.relationFromFields?.length) {
          const target = models.get(f.type);
          if (!target) continue;
          const columns = f.relationFromFields.map((x) => columnOf(m, x));
          t.foreignKeys.push({
            name: defaultName(table, columns, "fkey"),
            columns,
            refTable: tableOf(target),
            refColumns: (f.relationToFields ?? []).map((x) => columnOf(target, x)),
            onDelete: (f.relationOnDelete ?? (f.isRequired ? "Restrict" : "SetNull"))
              .toUpperCase()
              .replace("SETNULL", "SET NULL")
              .replace("NOACTION", "NO ACTION")
              .replace("SETDEFAULT", "SET DEFAULT"),
            onUpdate: (f.relationOnUpdate ?? "Cascade")
              .toUpperCase()
              .replace("SETNULL", "SET NULL")
              .replace("NOACTION", "NO ACTION")
              .replace("SETDEFAULT", "SET DEFAULT"),
          });
        }
        continue;
      }
      const baseType =
        f.kind === "enum"
          ? quoteIdent(enumDbName(f.type))
          : f.nativeType
            ? nativeTypeName(f.nativeType)
            : SCALAR_TYPES[f.type];
      t.columns[f.dbName ?? f.name] = {
        type: `${baseType ?? `unsupported:${f.type}`}${f.isList ? "[]" : ""}`,
        // Prisma creates scalar lists as nullable array columns.
        nullable: f.isList ? true : !f.isRequired,
        default: expectedDefault(f),
      };
    }
    for (const idx of datamodel.indexes.filter((i) => i.model === m.name)) {
      const columns = idx.fields.map((x) => columnOf(m, x.name));
      if (idx.type === "id") t.primaryKey = { name: idx.dbName ?? defaultName(table, columns, "pkey"), columns };
      else if (idx.type === "unique")
        t.uniques.push({ name: idx.dbName ?? defaultName(table, columns, "key"), columns });
      else if (idx.type === "normal")
        t.indexes.push({ name: idx.dbName ?? defaultName(table, columns, "idx"), columns });
    }
    tables[table] = t;
  }
  return { tables, enums };
}
