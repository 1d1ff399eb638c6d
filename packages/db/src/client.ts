import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/prisma/client.ts";

export type Db = PrismaClient;

/** One Prisma client on the pg driver adapter (no engine binary). */
export function createDb(databaseUrl: string, options: { maxConnections?: number } = {}): Db {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.maxConnections ?? 10 });
  return new PrismaClient({ adapter });
}
