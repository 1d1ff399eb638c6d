import "./provided.ts";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, inject } from "vitest";
import { createDb, type Db } from "../client.ts";
import { createTestDatabase, dropDatabase } from "./server.ts";

export { adminQuery, createTestDatabase, databaseUrl, dropDatabase, freePort, startTestServer } from "./server.ts";

export interface TestDatabase {
  /** Prisma client on this file's own database (valid inside tests, after beforeAll). */
  readonly db: Db;
  readonly url: string;
  readonly name: string;
}

/**
 * Gives the calling test file its own freshly migrated database on the run's Postgres server,
 * dropped after the file. Files run in parallel without sharing state.
 */
export function useTestDatabase(): TestDatabase {
  let db: Db | undefined;
  let url: string | undefined;
  const name = `rhumbatron_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  const adminUrl = () => inject("pgAdminUrl");
  beforeAll(async () => {
    url = await createTestDatabase(adminUrl(), inject("pgTemplate"), name);
    db = createDb(url, { maxConnections: 5 });
  });
  afterAll(async () => {
    await db?.$disconnect();
    await dropDatabase(adminUrl(), name);
  });
  return {
    name,
    get db() {
      if (!db) throw new Error("test database used before beforeAll ran");
      return db;
    },
    get url() {
      if (!url) throw new Error("test database used before beforeAll ran");
      return url;
    },
  };
}
export type { Prisma } from "../generated/prisma/client.ts";
export { blockStreamOffset, seedChange, seedProjects, testEvent, waitFor, waitForLockWaiter } from "./fixtures.ts";
export { dumpAllRows } from "./rows.ts";
export { seedVerifiedCandidate } from "./verified.ts";
