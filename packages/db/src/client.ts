import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/prisma/client.ts";

export type Db = PrismaClient;

/** One Prisma client on the pg driver adapter (no engine binary). */
export function createDb(databaseUrl: string, options: { maxConnections?: number } = {}): Db {
  // A bounded wait for a pooled connection: after the server restarted underneath a process, a
  // query fails (and its function runs again on the next tick) instead of waiting forever.
  const adapter = new PrismaPg({
    connectionString: databaseUrl,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: 60_000,
    keepAlive: true,
  });
  return new PrismaClient({ adapter });
}
