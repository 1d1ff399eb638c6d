import { DomainError } from "@rhumbatron/core";
import { createDb, type Db } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { fromDatabaseError } from "./database-errors.ts";
import { createCallerFactory, publicProcedure, router, type Services } from "./trpc.ts";

// Real failures of the real client: a server at a closed port, a connection killed mid-query, and
// values Postgres refuses. Each is read into the DomainError the API answers with.
const t = useTestDatabase();
let closed: Db;
let doomed: Db;

beforeAll(() => {
  closed = createDb("postgresql://postgres@127.0.0.1:1/rhumbatron");
  doomed = createDb(t.url, { maxConnections: 1 });
});
afterAll(async () => {
  await closed?.$disconnect();
  await doomed?.$disconnect().catch(() => {});
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected the query to fail");
    },
    (e: unknown) => e,
  );

function expectCode(err: unknown, code: DomainError["code"]): DomainError {
  const mapped = fromDatabaseError(err);
  expect(mapped, String(err)).toBeInstanceOf(DomainError);
  expect(mapped?.code).toBe(code);
  return mapped as DomainError;
}

describe("a database that cannot be reached is UNAVAILABLE", () => {
  it("for a model query, a transaction and a raw query at a closed port", async () => {
    for (const err of [
      await failure(closed.tenant.findMany()),
      await failure(closed.$transaction((tx) => tx.tenant.findMany())),
      await failure(closed.$queryRaw`SELECT 1`),
    ]) {
      expect(expectCode(err, "UNAVAILABLE").message).toBe("the database cannot be reached; try again in a moment");
    }
  });

  it("for a connection the server ends mid-query", async () => {
    await doomed.$queryRaw`SELECT 1`;
    const sleeping = failure(doomed.$queryRaw`SELECT pg_sleep(30), 'rhumbatron-doomed'`);
    // Wait (under one generous limit) until the query runs, then end its backend as a restart would.
    const deadline = Date.now() + 20_000;
    let ended = false;
    while (!ended && Date.now() < deadline) {
      const rows = await t.db.$queryRaw<{ ok: boolean }[]>`
        SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
        WHERE datname = current_database() AND query LIKE '%rhumbatron-doomed%' AND query NOT LIKE '%pg_stat_activity%'`;
      ended = rows.some((r) => r.ok);
      if (!ended) await new Promise((r) => setTimeout(r, 50));
    }
    expect(ended).toBe(true);
    expectCode(await sleeping, "UNAVAILABLE");
  });

  it.each([
    ["pg's pool", new Error("Connection terminated unexpectedly")],
    ["pg's connect timeout", new Error("timeout exceeded when trying to connect")],
    ["Prisma's pool timeout", Object.assign(new Error("Timed out fetching a new connection"), { code: "P2024" })],
    ["Prisma's initialization", Object.assign(new Error("Can't reach database server"), { errorCode: "P1001" })],
    ["a server shutting down", Object.assign(new Error("terminating connection"), { code: "57P01" })],
    ["a wrapped cause", new Error("query failed", { cause: Object.assign(new Error("x"), { code: "08006" }) })],
  ])("for %s", (_name, err) => {
    expectCode(err, "UNAVAILABLE");
  });
});

describe("a value Postgres refuses is INVALID_INPUT", () => {
  it("a NUL in text (22021), in JSON (22P05), text that is no number (22P02), a number out of range (22003)", async () => {
    expectCode(await failure(t.db.tenant.findFirst({ where: { id: "a\u0000b" } })), "INVALID_INPUT");
    expectCode(await failure(t.db.$queryRaw`SELECT ${"a\u0000"}::text`), "INVALID_INPUT");
    expectCode(await failure(t.db.$queryRaw`SELECT ${'"\\u0000"'}::jsonb`), "INVALID_INPUT");
    expectCode(await failure(t.db.$queryRaw`SELECT ${"12x"}::int`), "INVALID_INPUT");
    expectCode(await failure(t.db.$queryRaw`SELECT ${"99999999999"}::int`), "INVALID_INPUT");
  });

  it("a value too long for its column (22001)", async () => {
    const err = await failure(
      t.db.$transaction(async (tx) => {
        await tx.$executeRawUnsafe("CREATE TEMP TABLE short_values (v varchar(2)) ON COMMIT DROP");
        await tx.$executeRawUnsafe("INSERT INTO short_values VALUES ($1)", "abc");
      }),
    );
    expect(expectCode(err, "INVALID_INPUT").message).toContain("too long");
  });
});

describe("anything else stays an unexpected failure", () => {
  it("a unique violation, a syntax error, a plain error and a network error that is not the database's", async () => {
    await t.db.tenant.create({ data: { id: "ten_dup", slug: "dup", name: "Dup" } });
    expect(
      fromDatabaseError(await failure(t.db.tenant.create({ data: { id: "ten_dup", slug: "dup2", name: "D" } }))),
    ).toBeNull();
    expect(fromDatabaseError(await failure(t.db.$queryRawUnsafe("SELEC 1")))).toBeNull();
    expect(fromDatabaseError(new Error("boom"))).toBeNull();
    const fetchFailed = new TypeError("fetch failed", {
      cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }),
    });
    expect(fromDatabaseError(fetchFailed)).toBeNull();
    expect(fromDatabaseError(null)).toBeNull();
  });
});

describe("through a procedure", () => {
  const testRouter = router({
    read: publicProcedure
      .input(z.object({ id: z.string() }))
      .query(({ ctx, input }) => ctx.db.tenant.findFirst({ where: { id: input.id } })),
  });
  const callerOn = (db: Db) =>
    createCallerFactory(testRouter)({ db, services: undefined as unknown as Services, getCaller: async () => null });

  it("answers 503 for a database that cannot be reached and 400 for a value it refuses", async () => {
    const down = await failure(callerOn(closed).read({ id: "ten_x" }));
    expect(down).toBeInstanceOf(TRPCError);
    expect((down as TRPCError).code).toBe("SERVICE_UNAVAILABLE");
    expect(getHTTPStatusCodeFromError(down as TRPCError)).toBe(503);

    const nul = await failure(callerOn(t.db).read({ id: "a\u0000" }));
    expect((nul as TRPCError).code).toBe("BAD_REQUEST");
    expect((nul as TRPCError).message).toContain("the database refused a value of the input");

    expect(await callerOn(t.db).read({ id: "ten_none" })).toBeNull();
  });
});
