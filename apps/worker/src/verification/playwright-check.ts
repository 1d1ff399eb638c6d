import { closeSync, existsSync, openSync, readSync, realpathSync } from "node:fs";
import { mkdir, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join, relative } from "node:path";
import type { BlobStore } from "@rhumbatron/core";

/**
 * A project's own Playwright tests as a check (checks-file.ts, `procedure: playwright`): its test
 * files, run inside the Sandbox by Rhumbatron's Playwright test runner against the project's
 * preview command, in Rhumbatron's Chromium. Both run in the same Sandbox command, so the app is
 * reached on loopback inside it and nothing else is reachable.
 *
 * The project's own playwright.config is never read (it could point anywhere or run anything on
 * load): the config is ours, written under `.rhumbatron/run/` in the check's copy of the tree. It
 * starts the preview command with PORT set, gives every test that baseURL, writes a JUnit report
 * (each test's outcome, read by reports.ts) and keeps a screenshot and a trace of every test, which
 * become the Evidence's attachments. `@playwright/test`, imported by the project's test files,
 * resolves to our runner (a link in the copy's node_modules), so the version that loads the tests
 * is the one that runs them.
 */

/** Where the generated config, results and report go, relative to the checkout. */
const RUN_DIR = ".rhumbatron/run";
export const PLAYWRIGHT_REPORT = ".rhumbatron/reports/playwright.xml";
/** At most this many screenshots and traces are kept per check (the rest are listed in the log). */
const MAX_ATTACHMENTS = 40;
const ATTACHMENT = /\.(png|zip)$/;

const require = createRequire(import.meta.url);

/** The folders the Sandbox must mount (read-only, on PATH) for a Playwright check, and the paths inside. */
export interface PlaywrightToolchain {
  /** `@playwright/test`'s folder and the two packages it loads, as installed beside the worker. */
  packages: string[];
  /** The runner's entry point (cli.js of @playwright/test). */
  cli: string;
  testPackage: string;
  /** Chromium's own binary (not a distribution's wrapper script, which reads /etc). */
  chromium: string | null;
}

/** Chromium's own binary: CHROMIUM_PATH or Debian's /usr/lib/chromium/chromium, never a wrapper script. */
function chromiumBinary(env: NodeJS.ProcessEnv): string | null {
  for (const p of [env.CHROMIUM_PATH, "/usr/lib/chromium/chromium"]) {
    if (!p || !existsSync(p)) continue;
    const real = realpathSync(p);
    // A distribution's wrapper script cannot run in the Sandbox (Debian's reads /etc/chromium.d).
    if (!startsWithShebang(real)) return real;
  }
  return null;
}

function startsWithShebang(path: string): boolean {
  const fd = openSync(path, "r");
  try {
    const head = Buffer.alloc(2);
    readSync(fd, head, 0, 2, 0);
    return head.toString() === "#!";
  } finally {
    closeSync(fd);
  }
}

export function playwrightToolchain(env: NodeJS.ProcessEnv = process.env): PlaywrightToolchain | null {
  try {
    const testPackage = dirname(require.resolve("@playwright/test/package.json"));
    const fromTest = createRequire(join(testPackage, "package.json"));
    const playwright = dirname(fromTest.resolve("playwright/package.json"));
    const core = dirname(createRequire(join(playwright, "package.json")).resolve("playwright-core/package.json"));
    return {
      packages: [testPackage, playwright, core],
      cli: join(testPackage, "cli.js"),
      testPackage,
      chromium: chromiumBinary(env),
    };
  } catch {
    return null;
  }
}

/** The mounts a Sandbox needs for Playwright checks: the packages and Chromium's folder. */
export function playwrightMounts(env: NodeJS.ProcessEnv = process.env): string[] {
  const t = playwrightToolchain(env);
  if (!t) return [];
  return [...t.packages, ...(t.chromium ? [dirname(t.chromium)] : [])];
}

async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const a = server.address();
      server.close(() => (a && typeof a === "object" ? resolve(a.port) : reject(new Error("no port"))));
    });
  });
}

/** One argument for a POSIX shell, quoted (Playwright starts the web server through `sh -c`). */
const shellQuote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

export interface PreparedPlaywrightRun {
  argv: string[];
  env: Record<string, string>;
  report: { format: "junit"; path: string };
  /** Stores the screenshots and traces the run left as blobs under `keyPrefix`; returns their keys. */
  collect(blobs: BlobStore, keyPrefix: string): Promise<{ keys: string[]; log: string }>;
}

/**
 * Writes the config and the runner link into the check's copy of the tree. `start` is the preview
 * command (it must listen on 127.0.0.1:$PORT); `tests` the folder of the project's test files.
 */
export async function preparePlaywrightRun(
  workspace: string,
  o: { start: string[]; tests: string; timeoutSeconds: number; toolchain: PlaywrightToolchain },
): Promise<PreparedPlaywrightRun> {
  if (!o.toolchain.chromium) {
    throw new Error(
      "no Chromium binary for the Sandbox: install Chromium (apt-get install -y chromium) or set CHROMIUM_PATH to its binary",
    );
  }
  const run = join(workspace, RUN_DIR);
  await rm(run, { recursive: true, force: true });
  await rm(join(workspace, PLAYWRIGHT_REPORT), { force: true });
  await mkdir(run, { recursive: true });
  // The tests import @playwright/test: ours, whatever the tree holds there.
  const link = join(workspace, "node_modules", "@playwright", "test");
  await rm(link, { recursive: true, force: true });
  await mkdir(dirname(link), { recursive: true });
  await symlink(o.toolchain.testPackage, link);

  const port = await freeLoopbackPort();
  const origin = `http://127.0.0.1:${port}`;
  const config = {
    testDir: join("..", "..", o.tests),
    outputDir: "results",
    forbidOnly: true,
    retries: 0,
    workers: 1,
    timeout: 30_000,
    globalTimeout: o.timeoutSeconds * 1000,
    reporter: [["junit", { outputFile: join("..", "..", PLAYWRIGHT_REPORT) }], ["line"]],
    use: {
      baseURL: origin,
      screenshot: "on",
      trace: "on",
      launchOptions: { executablePath: o.toolchain.chromium },
    },
    webServer: {
      command: o.start.map(shellQuote).join(" "),
      cwd: "../..",
      url: origin,
      env: { PORT: String(port), HOST: "127.0.0.1" },
      reuseExistingServer: false,
      timeout: Math.min(60, o.timeoutSeconds) * 1000,
      stdout: "pipe",
      stderr: "pipe",
    },
  };
  const file = join(RUN_DIR, "playwright.config.mjs");
  await writeFile(
    join(workspace, file),
    `// Written by Rhumbatron for this check (apps/worker/src/verification/playwright-check.ts).\nexport default ${JSON.stringify(config, null, 2)};\n`,
  );
  return {
    // No tests found is a report with none, read as no signal, rather than the runner's exit 1.
    argv: ["node", o.toolchain.cli, "test", "--config", file, "--pass-with-no-tests"],
    env: { CI: "1", PW_TEST_HTML_REPORT_OPEN: "never", PLAYWRIGHT_SKIP_BROWSER_GC: "1" },
    report: { format: "junit", path: PLAYWRIGHT_REPORT },
    async collect(blobs, keyPrefix) {
      const results = join(run, "results");
      const found = (await walk(results)).filter((p) => ATTACHMENT.test(p)).sort();
      const keys: string[] = [];
      const lines: string[] = [];
      for (const path of found) {
        const rel = relative(results, path);
        if (keys.length >= MAX_ATTACHMENTS) {
          lines.push(`[playwright] not kept (more than ${MAX_ATTACHMENTS}): ${rel}`);
          continue;
        }
        const key = `${keyPrefix}/${rel.replaceAll("/", "__")}`;
        await blobs.put(key, await readFile(path), {
          contentType: path.endsWith(".png") ? "image/png" : "application/zip",
        });
        keys.push(key);
      }
      return { keys, log: lines.join("\n") };
    },
  };
}

async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}
