import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { productFiles } from "./lib/product-files.ts";
import { ROOT } from "./lib/stack.ts";

/**
 * db's front door (ARCHITECTURE.md, The rooms): outside packages/db and packages/runtime, product
 * code reads and writes through db's functions and never calls the Prisma client itself. The import
 * half is dependency-cruiser's `db-front-door`; this reads the source for the call half: a model's
 * method on a database handle (`db.project.findMany(`, `ctx.tx.task.count(`) or raw SQL (`$queryRaw`,
 * `$executeRaw`, `$transaction`).
 */
const schema = readFileSync(join(ROOT, "prisma/schema.prisma"), "utf8");
const delegates = [...schema.matchAll(/^model (\w+)/gm)].map(([, m = ""]) => m.charAt(0).toLowerCase() + m.slice(1));
const METHODS =
  "findMany|findFirst|findFirstOrThrow|findUnique|findUniqueOrThrow|create|createMany|createManyAndReturn|update|updateMany|upsert|delete|deleteMany|count|aggregate|groupBy";
const CALL = new RegExp(
  `\\b(?:db|tx|prisma)\\s*\\.\\s*(?:(?:${delegates.join("|")})\\s*\\.\\s*(?:${METHODS})|\\$(?:queryRaw|executeRaw|queryRawUnsafe|executeRawUnsafe|transaction))\\b`,
  "g",
);
function callsIn(text: string): string[] {
  return [...text.matchAll(CALL)].map((m) => m[0].replace(/\s+/g, ""));
}

describe("db's front door", () => {
  it("finds a planted call, across lines too (the check can fail)", () => {
    expect(callsIn("await deps.db.project.findUnique({ where })")).toEqual(["db.project.findUnique"]);
    expect(callsIn("await ctx.tx\n  .changeSet\n  .count({})")).toEqual(["tx.changeSet.count"]);
    expect(callsIn("await db.$queryRaw`SELECT 1`")).toEqual(["db.$queryRaw"]);
    expect(callsIn("trpc.change.create.mutate({})")).toEqual([]);
  });

  it("no product code outside db and the runtime calls the Prisma client", () => {
    const found = productFiles()
      .filter((f) => !/^packages\/(db|runtime)\//.test(f))
      .flatMap((f) => callsIn(readFileSync(join(ROOT, f), "utf8")).map((call) => `${f}: ${call}`));
    expect(found).toEqual([]);
  });
});
