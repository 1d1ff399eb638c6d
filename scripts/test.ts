/**
 * `npm test`: every test, in two stages, then one summary line.
 *   1. unit + integration (vitest, real Postgres: DATABASE_URL's server or an embedded one)
 *   2. end-to-end (Playwright in Chromium against the whole product)
 * A missing Chromium fails the run with the install hint; nothing is skipped silently.
 * `--only=unit` or `--only=e2e` runs one stage.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { CHROMIUM_INSTALL_HINT, findChromium } from "../e2e/support/chromium.ts";
import { freePort } from "./lib/ports.ts";
import { ROOT } from "./lib/stack.ts";

interface Tally {
  passed: number;
  failed: number;
  skipped: number;
}

const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length);
const resultsDir = join(ROOT, ".data", "test-results");
mkdirSync(resultsDir, { recursive: true });

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: "inherit" });
    child.on("exit", (code) => resolve(code ?? 1));
    child.on("error", () => resolve(1));
  });
}

function readJson(file: string): unknown {
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null;
}

async function unitStage(): Promise<Tally> {
  const out = join(resultsDir, "vitest.json");
  rmSync(out, { force: true });
  const code = await run(join(ROOT, "node_modules/.bin/vitest"), [
    "run",
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${out}`,
  ]);
  const r = readJson(out) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
  } | null;
  if (!r) return { passed: 0, failed: 1, skipped: 0 };
  const failed = r.numFailedTests + (code !== 0 && r.numFailedTests === 0 ? 1 : 0);
  return { passed: r.numPassedTests, failed, skipped: r.numPendingTests + r.numTodoTests };
}

async function e2eStage(): Promise<Tally> {
  if (!findChromium()) {
    process.stderr.write(`e2e: ${CHROMIUM_INSTALL_HINT}\n`);
    return { passed: 0, failed: 1, skipped: 0 };
  }
  const out = join(resultsDir, "e2e.json");
  rmSync(out, { force: true });
  const env = { ...process.env, E2E_PORT: String(await freePort()), E2E_JSON_REPORT: out };
  const code = await run(join(ROOT, "node_modules/.bin/playwright"), ["test", "-c", "e2e/playwright.config.ts"], env);
  const r = readJson(out) as { stats: { expected: number; unexpected: number; flaky: number; skipped: number } } | null;
  if (!r) return { passed: 0, failed: 1, skipped: 0 };
  const failed = r.stats.unexpected + r.stats.flaky + (code !== 0 && r.stats.unexpected === 0 ? 1 : 0);
  return { passed: r.stats.expected, failed, skipped: r.stats.skipped };
}

async function main() {
  const stages: [string, Tally][] = [];
  if (only !== "e2e") stages.push(["unit+integration", await unitStage()]);
  if (only !== "unit") stages.push(["e2e", await e2eStage()]);
  const total = stages.reduce(
    (a, [, t]) => ({ passed: a.passed + t.passed, failed: a.failed + t.failed, skipped: a.skipped + t.skipped }),
    { passed: 0, failed: 0, skipped: 0 },
  );
  console.log("");
  for (const [name, t] of stages) console.log(`${name}: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`);
  console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
  // A skipped test is not a passing one: the run fails if any test was skipped.
  process.exit(total.failed > 0 || total.skipped > 0 || total.passed === 0 ? 1 : 0);
}

void main();
