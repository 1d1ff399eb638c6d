/**
 * The whole product (scripts/lib/stack.ts: Postgres, migrations, demo seed, worker + web) for a
 * harness that drives it from outside and runs this script as a process: e2e's global setup
 * (e2e/support/global-setup.ts). Options come as JSON in RHUMBATRON_STACK_OPTIONS (`databaseUrl`,
 * `dataDir`, `embeddedPgPort`, `port`, `persistentDb`, `quiet`); the product's settings are this
 * process's environment. When the stack answers it prints one line `RHUMBATRON_STACK_READY {json}`
 * (`url`, `databaseUrl`, `demo`); SIGTERM or SIGINT stops the stack (bounded) and exits 0. A start
 * that fails exits 1 with the reason on stderr.
 */
import { exitWith } from "./lib/fail.ts";
import { type Stack, startStack } from "./lib/stack.ts";

const READY_PREFIX = "RHUMBATRON_STACK_READY ";

interface StackServerOptions {
  databaseUrl?: string;
  dataDir: string;
  embeddedPgPort: number;
  port: number;
  persistentDb?: boolean;
  quiet?: boolean;
}

async function main() {
  const { RHUMBATRON_STACK_OPTIONS: options, ...env } = process.env;
  const o = JSON.parse(options ?? "{}") as StackServerOptions;
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const interrupt = new AbortController();
  let stack: Stack | undefined;
  let stopping = false;
  const stop = async () => {
    if (!stack) return interrupt.abort();
    if (stopping) return;
    stopping = true;
    await stack.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
  stack = await startStack({
    databaseUrl: o.databaseUrl,
    dataDir: o.dataDir,
    embeddedPgPort: o.embeddedPgPort,
    port: o.port,
    dev: false,
    env,
    ...(o.persistentDb !== undefined ? { persistentDb: o.persistentDb } : {}),
    ...(o.quiet !== undefined ? { quiet: o.quiet } : {}),
    log,
    signal: interrupt.signal,
  });
  const { url, databaseUrl, demo } = stack;
  process.stdout.write(`${READY_PREFIX}${JSON.stringify({ url, databaseUrl, demo })}\n`);
}

main().catch(exitWith);
