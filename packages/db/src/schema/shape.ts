/** A database schema reduced to what the drift check compares. */
export interface ColumnShape {
  type: string;
  nullable: boolean;
  /** Normalised default: "now", "autoincrement", "[]", a literal, or null for none. */
  default: string | null;
}

export interface KeyShape {
  name: string;
  columns: string[];
}

export interface ForeignKeyShape extends KeyShape {
  refTable: string;
  refColumns: string[];
  onDelete: string;
  onUpdate: string;
}

export interface TableShape {
  columns: Record<string, ColumnShape>;
  primaryKey: KeyShape | null;
  uniques: KeyShape[];
  indexes: KeyShape[];
  foreignKeys: ForeignKeyShape[];
}

export interface SchemaShape {
  tables: Record<string, TableShape>;
  enums: Record<string, string[]>;
}

/** jsonb defaults compare as values: Postgres rewrites their spacing and key order. */
function canonicalJson(text: string | null): string | null {
  if (text === null) return null;
  try {
    const sortKeys = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(sortKeys)
        : v && typeof v === "object"
          ? Object.fromEntries(
              Object.entries(v as Record<string, unknown>)
                .sort(([a], [b]) => a.localeCompare(b))
                .map(([k, x]) => [k, sortKeys(x)]),
            )
          : v;
    return JSON.stringify(sortKeys(JSON.parse(text)));
  } catch {
    return text;
  }
}

function sameDefault(type: string, a: string | null, b: string | null): boolean {
  if (a === b) return true;
  return (type === "jsonb" || type === "json") && canonicalJson(a) === canonicalJson(b);
}

const fmtDefault = (d: string | null) => (d === null ? "none" : JSON.stringify(d));
const keyText = (k: KeyShape) => `${k.name}(${k.columns.join(",")})`;
const fkText = (k: ForeignKeyShape) =>
  `${keyText(k)} -> ${k.refTable}(${k.refColumns.join(",")}) on delete ${k.onDelete} on update ${k.onUpdate}`;

function diffKeys<T extends KeyShape>(
  where: string,
  what: string,
  want: T[],
  have: T[],
  text: (k: T) => string,
): string[] {
  const w = new Set(want.map(text));
  const h = new Set(have.map(text));
  return [
    ...[...w].filter((x) => !h.has(x)).map((x) => `${where}: ${what} ${x} is in schema.prisma but not in the database`),
    ...[...h].filter((x) => !w.has(x)).map((x) => `${where}: ${what} ${x} is in the database but not in schema.prisma`),
  ];
}

/** Every difference between what schema.prisma describes and what the migrations built, one line each. */
export function diffSchemas(expected: SchemaShape, actual: SchemaShape): string[] {
  const out: string[] = [];
  for (const [name, values] of Object.entries(expected.enums)) {
    const have = actual.enums[name];
    if (!have) out.push(`enum ${name} is in schema.prisma but not in the database`);
    else if (have.join(",") !== values.join(","))
      out.push(`enum ${name}: schema.prisma has (${values.join(", ")}), database has (${have.join(", ")})`);
  }
  for (const name of Object.keys(actual.enums))
    if (!expected.enums[name]) out.push(`enum ${name} is in the database but not in schema.prisma`);

  for (const [name, want] of Object.entries(expected.tables)) {
    const have = actual.tables[name];
    if (!have) {
      out.push(`table ${name} is in schema.prisma but not in the database`);
      continue;
    }
    for (const [col, w] of Object.entries(want.columns)) {
      const h = have.columns[col];
      if (!h) {
        out.push(`${name}.${col} is in schema.prisma but not in the database`);
        continue;
      }
      if (w.type !== h.type) out.push(`${name}.${col}: type is ${w.type} in schema.prisma, ${h.type} in the database`);
      if (w.nullable !== h.nullable)
        out.push(
          `${name}.${col}: ${w.nullable ? "nullable" : "NOT NULL"} in schema.prisma, ${h.nullable ? "nullable" : "NOT NULL"} in the database`,
        );
      if (!sameDefault(w.type, w.default, h.default))
        out.push(
          `${name}.${col}: default is ${fmtDefault(w.default)} in schema.prisma, ${fmtDefault(h.default)} in the database`,
        );
    }
    for (const col of Object.keys(have.columns))
      if (!want.columns[col]) out.push(`${name}.${col} is in the database but not in schema.prisma`);
    out.push(
      ...diffKeys(
        name,
        "primary key",
        want.primaryKey ? [want.primaryKey] : [],
        have.primaryKey ? [have.primaryKey] : [],
        keyText,
      ),
    );
    out.push(...diffKeys(name, "unique", want.uniques, have.uniques, keyText));
    out.push(...diffKeys(name, "index", want.indexes, have.indexes, keyText));
    out.push(...diffKeys(name, "foreign key", want.foreignKeys, have.foreignKeys, fkText));
  }
  for (const name of Object.keys(actual.tables))
    if (!expected.tables[name]) out.push(`table ${name} is in the database but not in schema.prisma`);
  return out;
}
