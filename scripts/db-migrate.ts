/**
 * `npm run db:migrate`: applies pending migrations to DATABASE_URL, or to the embedded Postgres in
 * .data/ when DATABASE_URL is unset. Prints what it applied.
 */
import { parseSettings } from "@rhumbatron/core";
import { migrate } from "@rhumbatron/db";
import { openDatabase } from "./lib/database.ts";
import { loadEnvFile } from "./lib/env-file.ts";
import { exitWith } from "./lib/fail.ts";
import { ROOT as ROOT_DIR } from "./lib/stack.ts";

async function main() {
  loadEnvFile(ROOT_DIR);
  const settings = parseSettings(process.env);
  const db = await openDatabase({
    databaseUrl: settings.DATABASE_URL,
    dataDir: settings.RHUMBATRON_DATA_DIR,
    embeddedPort: settings.RHUMBATRON_EMBEDDED_PG_PORT,
  });
  try {
    const result = await migrate(db.url, { log: (l) => console.log(l) });
    console.log(
      `${result.total} migrations, ${result.applied.length} applied now, ${result.alreadyApplied} already applied`,
    );
  } finally {
    await db.stop();
  }
}

main().then(() => process.exit(0), exitWith);
