import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "./client.ts";
import { failedDatabaseHealth } from "./queries/health.ts";
import { databaseAddress, databaseErrorText, unreachable } from "./reachability.ts";
import { freePort, useTestDatabase } from "./testing/index.ts";

// Real failures of the real clients, read into words: Prisma and a bare pg client pointed at a
// closed port, a connection the server ends mid-query, a wrong password, a failed query. The URL's
// password must never come out.
const t = useTestDatabase();
const PASSWORD = "s3cret-Pw";
let closedUrl: string;
let closed: Db;

beforeAll(async () => {
  closedUrl = `postgresql://rhumbatron:${PASSWORD}@127.0.0.1:${await freePort()}/rhumbatron`;
  closed = createDb(closedUrl);
});
afterAll(async () => {
  await closed?.$disconnect();
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected it to fail");
    },
    (e: unknown) => e,
  );

function words(err: unknown): string {
  const health = failedDatabaseHealth(err);
  const text = JSON.stringify(health);
  expect(text).not.toContain(PASSWORD);
  expect(text).not.toMatch(/prisma|invocation|DATABASE_URL|\\n/i);
  return health.error ?? "";
}

describe("a database that does not answer, in words", () => {
  it("a closed port: connection refused, for a model query, a transaction, a raw query and a bare pg client", async () => {
    const errors = [
      await failure(closed.workerHeartbeat.findFirst()),
      await failure(closed.$transaction((tx) => tx.tenant.findMany())),
      await failure(closed.$queryRaw`SELECT 1`),
    ];
    for (const err of errors) {
      expect(unreachable(err)).toEqual({ reason: "connection refused", answered: false });
      expect(failedDatabaseHealth(err)).toMatchObject({ failure: "down", error: "connection refused" });
      words(err);
    }
    const client = new pg.Client({ connectionString: closedUrl });
    const bare = await failure(client.connect());
    // A bare socket error is the database's only when it came from a database connection.
    expect(unreachable(bare)).toBeNull();
    expect(unreachable(bare, { fromConnection: true })).toEqual({ reason: "connection refused", answered: false });
  });

  it("a connection the server ends mid-query: the server shut down", async () => {
    const doomed = createDb(t.url, { maxConnections: 1 });
    try {
      await doomed.$queryRaw`SELECT 1`;
      const sleeping = failure(doomed.$queryRaw`SELECT pg_sleep(30), 'reachability-doomed'`);
      let ended = false;
      while (!ended) {
        const rows = await t.db.$queryRaw<{ ok: boolean }[]>`
          SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE datname = current_database() AND query LIKE '%reachability-doomed%' AND query NOT LIKE '%pg_stat_activity%'`;
        ended = rows.some((r) => r.ok);
        if (!ended) await new Promise((r) => setTimeout(r, 50));
      }
      const err = await sleeping;
      expect(unreachable(err)).toEqual({ reason: "the server shut down", answered: false });
      expect(words(err)).toBe("the server shut down");
    } finally {
      await doomed.$disconnect().catch(() => {});
    }
  });

  it("a wrong password: the server answers and refuses it", async () => {
    const u = new URL(t.url);
    u.username = "rhumbatron_nobody";
    u.password = PASSWORD;
    const wrong = createDb(u.toString());
    try {
      const err = await failure(wrong.$queryRaw`SELECT 1`);
      expect(failedDatabaseHealth(err)).toMatchObject({ failure: "refused" });
      words(err);
    } finally {
      await wrong.$disconnect();
    }
  });

  it("a query that fails is no outage: one line of the server's own message", async () => {
    const err = await failure(t.db.$queryRawUnsafe("SELECT * FROM no_such_table"));
    expect(unreachable(err)).toBeNull();
    expect(failedDatabaseHealth(err)).toMatchObject({ failure: "error" });
    expect(words(err)).toBe('relation "no_such_table" does not exist');
  });

  it("names host and port, never the user or password", () => {
    expect(databaseAddress(closedUrl)).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(databaseAddress("postgresql://u:p@db.example.com/x")).toBe("db.example.com:5432");
    expect(databaseErrorText(new Error(`connect to ${closedUrl} failed`))).not.toContain(PASSWORD);
  });
});
