import { DomainError } from "@rhumbatron/core";
import { createDb, type Db } from "@rhumbatron/db";
import { serverSettings } from "./settings.ts";

/**
 * The one Prisma client of this server process. It lives on globalThis because `next dev` re-evaluates
 * modules on every edit: a module-level client would open a new pg pool each time and leak the old one.
 * Keyed on DATABASE_URL so a changed URL replaces (and closes) the old client instead of reusing it.
 */
const slot = globalThis as typeof globalThis & { __rhumbatronDb?: { url: string; db: Db } };

export function getDb(): Db {
  const url = serverSettings().DATABASE_URL;
  if (!url) {
    // `npm start` sets DATABASE_URL for the web process (embedded Postgres or the configured server).
    throw new DomainError("UNAVAILABLE", "DATABASE_URL is not set for the web server");
  }
  const current = slot.__rhumbatronDb;
  if (current?.url === url) return current.db;
  if (current) void current.db.$disconnect().catch(() => {});
  const db = createDb(url);
  slot.__rhumbatronDb = { url, db };
  return db;
}
