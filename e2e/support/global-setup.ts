import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "../../scripts/lib/ports.ts";
import { startStack } from "../../scripts/lib/stack.ts";
import { saveSignedInState } from "./auth.ts";

/**
 * The shell's environment without the product's own settings (RHUMBATRON_*, INNGEST_*, AGENT_*):
 * the product under test gets what this file gives it, never a setting left in a developer's shell
 * (.ci/run unsets the same names for the whole run).
 */
function shellWithoutProductSettings(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(RHUMBATRON_|INNGEST_|AGENT_)/.test(k)));
}

/**
 * Starts the product for the e2e run: on DATABASE_URL's server in a fresh database of its own, or on
 * a throwaway embedded Postgres. Returns the teardown.
 */
export default async function globalSetup() {
  const port = Number(process.env.E2E_PORT ?? 3199);
  const external = process.env.DATABASE_URL;
  let databaseUrl: string | undefined;
  let dropDb = async () => {};
  if (external) {
    const name = `rhumbatron_e2e_${randomBytes(4).toString("hex")}`;
    const admin = new pg.Client({ connectionString: external });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const u = new URL(external);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
    dropDb = async () => {
      const c = new pg.Client({ connectionString: external });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), "rhumbatron-e2e-"));
  const gitPort = await freePort();
  // The embedded server runs as its own system user when we are root; let it reach its folder.
  chmodSync(dataDir, 0o755);
  const stack = await startStack({
    databaseUrl,
    dataDir,
    embeddedPgPort: await freePort(),
    port,
    dev: false,
    env: {
      ...shellWithoutProductSettings(),
      RHUMBATRON_LOG_LEVEL: "warn",
      RHUMBATRON_GIT_PORT: String(gitPort),
      // The clone URL the web app hands out must point at this run's git endpoint, not the default port.
      RHUMBATRON_GIT_PUBLIC_URL: `http://localhost:${gitPort}/git`,
      RHUMBATRON_DATA_DIR: dataDir,
    },
    persistentDb: false,
    quiet: !process.env.E2E_VERBOSE,
    log: (line) => process.stdout.write(`e2e: ${line}\n`),
  });
  process.env.E2E_DEMO_PROJECT_ID = stack.demo.projectId;
  // For what no page or API creates: the operator command (`npm run admin`, specs/access) runs on
  // this database, and specs/operations sends its poison command here.
  process.env.E2E_DATABASE_URL = stack.databaseUrl;
  // Specs use pages as the signed-in demo admin (playwright.config.ts: storageState); the sign-in
  // spec starts signed out and uses the form itself.
  const { email, password } = stack.demo;
  try {
    if (password === null) throw new Error("e2e: the demo admin has no password (RHUMBATRON_DEMO_PASSWORD)");
    process.env.E2E_DEMO_EMAIL = email;
    process.env.E2E_DEMO_PASSWORD = password;
    await saveSignedInState(`http://localhost:${port}`, email, password);
  } catch (err) {
    await stack.stop();
    await dropDb();
    throw err;
  }
  return async () => {
    await stack.stop();
    await dropDb();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
