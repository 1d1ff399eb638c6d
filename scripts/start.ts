/**
 * `npm start` (and `npm run dev` with --dev): the whole product on this machine.
 * Refuses settings that would expose it (scripts/lib/exposure.ts) -> setup step (Chromium,
 * bubblewrap, git) -> Postgres (embedded in .data/ unless DATABASE_URL is set) -> migrations -> demo
 * seed -> worker + web, each restarted with backoff when it crashes (scripts/lib/supervisor.ts).
 * `--workers N` starts N worker processes (docs/scale-out.md).
 * Ctrl-C stops web, worker and the embedded Postgres, each within a bounded time; a second Ctrl-C
 * kills them at once. The data stays for the next start.
 */
import { spawn } from "node:child_process";
import { parseSettings, requiresIsolation } from "@rhumbatron/core";
import { bubblewrapAvailable } from "../apps/worker/src/sandbox/bubblewrap.ts";
import { loadEnvFile } from "./lib/env-file.ts";
import { exposureRefusal } from "./lib/exposure.ts";
import { exitWith, StartupError } from "./lib/fail.ts";
import { ROOT as ROOT_DIR, type Stack, startStack } from "./lib/stack.ts";
import { ensureSystemParts, machineHost } from "./lib/system-parts.ts";

const dev = process.argv.includes("--dev");

/** `--workers N` (or `--workers=N`): worker processes to start, 1 to 8 (docs/scale-out.md). */
function workersArg(argv: readonly string[]): number {
  const at = argv.findIndex((a) => a === "--workers" || a.startsWith("--workers="));
  if (at === -1) return 1;
  const raw = argv[at]?.includes("=") ? argv[at]?.split("=")[1] : argv[at + 1];
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 8) {
    throw new StartupError(`--workers takes a number of worker processes from 1 to 8, not "${raw ?? ""}"`);
  }
  return n;
}
const log = (line: string) => process.stdout.write(`rhumbatron: ${line}\n`);

/**
 * Ctrl-C signals the terminal's whole process group. The embedded Postgres is a child of this
 * process and would get that SIGINT too, and stop before web and worker. So the stack runs in a
 * child process of its own session; this parent forwards Ctrl-C (and a closed terminal) to it as
 * SIGTERM: the first stops everything in order, a second kills what is left at once.
 */
function runInOwnSession(): void {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    detached: true,
    env: { ...process.env, RHUMBATRON_SUPERVISED: "1" },
  });
  const forward = () => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, "SIGTERM");
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, forward);
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

async function main() {
  loadEnvFile(ROOT_DIR);
  const settings = parseSettings(process.env);
  const workers = workersArg(process.argv);
  // Before anything starts: never expose a server whose session cookies anyone can forge.
  const refusal = exposureRefusal(settings);
  if (refusal) throw new StartupError(refusal);

  // Signals are ours from here on: during start-up they abort it (startStack stops what it started).
  const interrupt = new AbortController();
  let starting = false;
  let stack: Stack | undefined;
  let stopping = false;
  const shutdown = async (code: number) => {
    if (!starting) process.exit(130); // the setup step: nothing of ours runs yet
    if (!stack) return interrupt.abort();
    if (stopping) {
      log("stopping at once (SIGKILL to web, worker and database)");
      stack.kill();
      process.exit(code || 130);
    }
    stopping = true;
    log("stopping web, worker and database … (Ctrl-C again to kill them at once)");
    await stack.stop();
    log("stopped");
    process.exit(code);
  };
  process.on("SIGINT", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));

  await ensureSystemParts(machineHost(log));
  starting = true;
  stack = await startStack({
    databaseUrl: settings.DATABASE_URL,
    dataDir: settings.RHUMBATRON_DATA_DIR,
    embeddedPgPort: settings.RHUMBATRON_EMBEDDED_PG_PORT,
    port: settings.PORT,
    host: settings.HOST,
    dev,
    env: process.env,
    log,
    signal: interrupt.signal,
    workers,
  });
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
else runInOwnSession();
