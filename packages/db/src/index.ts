export { createDb, type Db } from "./client.ts";
export { withTransaction, type Tx, type TxContext, type AfterCommit } from "./transaction.ts";
export { migrate, readMigrations, countAppliedMigrations, MIGRATIONS_DIR, type MigrateResult } from "./migrate.ts";
export { startEmbeddedPostgres, ensureDatabase, type EmbeddedServer } from "./embedded.ts";
export { seedDemo, DEMO, type SeedResult } from "./commands/seed-demo.ts";
export * from "./queries/projects.ts";
export * from "./queries/health.ts";
export * from "./generated/prisma/enums.ts";
export type { Prisma } from "./generated/prisma/client.ts";
