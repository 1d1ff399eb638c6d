import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@rhumbatron/fixtures";
import pg from "pg";
import { saveSignedInState } from "./auth.ts";
import { startProductProcess } from "./processes.ts";
import { ROOT } from "./root.ts";

/**
 * The shell's environment without the product's own settings (RHUMBATRON_*, INNGEST_*, AGENT_*):
 * the product under test gets what this file gives it, never a setting left in a developer's shell
 * (.ci/run unsets the same names for the whole run).
 */
function shellWithoutProductSettings(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(RHUMBATRON_|INNGEST_|AGENT_)/.test(k)));
}

/** What scripts/stack-server.ts prints once the product answers. */
interface ReadyStack {
  url: string;
  databaseUrl: string;
  demo: { email: string; password: string | null; projectId: string; signInUrl: string };
}
const READY_PREFIX = "RHUMBATRON_STACK_READY ";

/**
 * Runs the product as a process (scripts/stack-server.ts: Postgres, migrations, demo seed, worker
 * and web, as `npm start` starts them); resolves once it answers, with what it reports and `stop`.
 */
async function startStackProcess(options: object, env: NodeJS.ProcessEnv) {
  let ready: (stack: ReadyStack) => void = () => {};
  const started = new Promise<ReadyStack>((resolve) => {
    ready = resolve;
  });
  const p = startProductProcess(process.execPath, ["--import", "tsx", "scripts/stack-server.ts"], {
    cwd: ROOT,
    env: { ...env, RHUMBATRON_STACK_OPTIONS: JSON.stringify(options) },
    prefix: "e2e: ",
    quiet: false,
    // It stops web and worker before its embedded Postgres itself; a signal to its group would stop them all at once.
    termLeaderOnly: true,
    onLine: (line) => {
      if (!line.startsWith(READY_PREFIX)) return false;
      ready(JSON.parse(line.slice(READY_PREFIX.length)) as ReadyStack);
      return true;
    },
  });
  const stack = await Promise.race([
    started,
    p.exited.then((code) => {
      throw new Error(`e2e: the product did not start (scripts/stack-server.ts exited ${code})`);
    }),
  ]);
  return { ...stack, stop: () => p.stop(60_000) };
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
  const stack = await startStackProcess(
    {
      databaseUrl,
      dataDir,
      embeddedPgPort: await freePort(),
      port,
      persistentDb: false,
      quiet: !process.env.E2E_VERBOSE,
    },
    {
      ...shellWithoutProductSettings(),
      RHUMBATRON_LOG_LEVEL: "warn",
      RHUMBATRON_GIT_PORT: String(gitPort),
      // The clone URL the web app hands out must point at this run's git endpoint, not the default port.
      RHUMBATRON_GIT_PUBLIC_URL: `http://localhost:${gitPort}/git`,
      RHUMBATRON_DATA_DIR: dataDir,
    },
  );
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
