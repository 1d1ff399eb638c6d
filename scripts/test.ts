/**
 * `npm test`: every test, in two stages side by side, then one summary line.
 *   1. unit + integration (vitest, real Postgres: DATABASE_URL's server or an embedded one)
 *   2. end-to-end (Playwright in Chromium against the whole product, on a stack of its own)
 * First the setup step (scripts/lib/system-parts.ts) provides Chromium, bubblewrap and git, or stops
 * with the command to run. The e2e stage runs the production build of the web app as the code is
 * now, built afresh at the start; it begins as soon as the build is done, while the unit stage
 * still runs. Both mostly wait on Postgres, git, processes and the browser (one after the other
 * they kept the two cores under half busy), and every test waits for a condition under a generous
 * outer limit, never for a duration, so a busy machine makes them slower, not wrong (`npm run
 * test:loaded` checks that). Nothing is skipped: a skipped test fails the run, and the summary
 * names it. `--only=unit` or `--only=e2e` runs one stage.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { CHROMIUM_INSTALL_HINT, findChromium } from "@rhumbatron/core";
import { ensureAgentPrograms } from "./lib/agent-programs.ts";
import { exitWith } from "./lib/fail.ts";
import { freePort } from "./lib/ports.ts";
import { buildWeb, ROOT } from "./lib/stack.ts";
import { ensureSystemParts, machineHost } from "./lib/system-parts.ts";

interface Tally {
  passed: number;
  failed: number;
  skipped: number;
  /** Names of the skipped tests (file > test). */
  skippedNames: string[];
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
    testResults?: { name: string; assertionResults?: { status: string; fullName: string }[] }[];
  } | null;
  if (!r) return { passed: 0, failed: 1, skipped: 0, skippedNames: [] };
  const failed = r.numFailedTests + (code !== 0 && r.numFailedTests === 0 ? 1 : 0);
  const skippedNames = (r.testResults ?? []).flatMap((f) =>
    (f.assertionResults ?? [])
      .filter((t) => t.status !== "passed" && t.status !== "failed")
      .map((t) => `${relative(ROOT, f.name)} > ${t.fullName}`),
  );
  return { passed: r.numPassedTests, failed, skipped: r.numPendingTests + r.numTodoTests, skippedNames };
}

interface PlaywrightSuite {
  title: string;
  file?: string;
  specs?: { title: string; tests: { status: string }[] }[];
  suites?: PlaywrightSuite[];
}

function playwrightSkipped(suites: PlaywrightSuite[] | undefined, path: string[] = []): string[] {
  return (suites ?? []).flatMap((s) => [
    ...(s.specs ?? [])
      .filter((spec) => spec.tests.some((t) => t.status === "skipped"))
      .map((spec) => [...path, s.title, spec.title].filter(Boolean).join(" > ")),
    ...playwrightSkipped(s.suites, [...path, s.title]),
  ]);
}

async function e2eStage(built: Promise<string | null>): Promise<Tally> {
  const buildFailure = await built;
  if (buildFailure) {
    process.stderr.write(`e2e: ${buildFailure}\n`);
    return { passed: 0, failed: 1, skipped: 0, skippedNames: [] };
  }
  if (!findChromium(process.env, existsSync)) {
    process.stderr.write(`e2e: ${CHROMIUM_INSTALL_HINT}\n`);
    return { passed: 0, failed: 1, skipped: 0, skippedNames: [] };
  }
  const out = join(resultsDir, "e2e.json");
  rmSync(out, { force: true });
  const env = { ...process.env, E2E_PORT: String(await freePort()), E2E_JSON_REPORT: out };
  const code = await run(join(ROOT, "node_modules/.bin/playwright"), ["test", "-c", "e2e/playwright.config.ts"], env);
  const r = readJson(out) as {
    stats: { expected: number; unexpected: number; flaky: number; skipped: number };
    suites?: PlaywrightSuite[];
  } | null;
  if (!r) return { passed: 0, failed: 1, skipped: 0, skippedNames: [] };
  const failed = r.stats.unexpected + r.stats.flaky + (code !== 0 && r.stats.unexpected === 0 ? 1 : 0);
  return { passed: r.stats.expected, failed, skipped: r.stats.skipped, skippedNames: playwrightSkipped(r.suites) };
}

async function main() {
  await ensureSystemParts(machineHost()).catch(exitWith);
  // The unit stage's agent-program tests run Claude Code and Codex; the e2e stage does not.
  if (only !== "e2e") await ensureAgentPrograms((line) => console.log(line)).catch(exitWith);
  const stages: [string, Tally][] = [];
  // The build's failure, or null once it is done (a failed build fails the e2e stage with its reason).
  const built =
    only === "unit"
      ? Promise.resolve(null)
      : buildWeb((line) => console.log(`e2e: ${line}`), true).then(
          () => null,
          (err: unknown) => (err instanceof Error ? err.message : String(err)),
        );
  const unit = only === "e2e" ? null : unitStage();
  const e2e = only === "unit" ? null : e2eStage(built);
  if (unit) stages.push(["unit+integration", await unit]);
  if (e2e) stages.push(["e2e", await e2e]);
  const total = stages.reduce(
    (a, [, t]) => ({
      passed: a.passed + t.passed,
      failed: a.failed + t.failed,
      skipped: a.skipped + t.skipped,
      skippedNames: [...a.skippedNames, ...t.skippedNames],
    }),
    { passed: 0, failed: 0, skipped: 0, skippedNames: [] as string[] },
  );
  console.log("");
  for (const [name, t] of stages) console.log(`${name}: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`);
  console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped${namesOf(total.skippedNames)}`);
  // A skipped test is not a passing one: the run fails if any test was skipped.
  process.exit(total.failed > 0 || total.skipped > 0 || total.passed === 0 ? 1 : 0);
}

/** The skipped tests, named on the summary line itself (the first ten, then how many more). */
function namesOf(names: string[]): string {
  if (names.length === 0) return "";
  const shown = names.slice(0, 10).join("; ");
  return ` (skipped: ${shown}${names.length > 10 ? `; and ${names.length - 10} more` : ""})`;
}

void main();
