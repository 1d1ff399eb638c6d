import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { XMLParser } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vendoredPytestPath } from "./test-pytest.ts";
import { isolatedNpmEnv, type LocalRegistry, startLocalRegistry } from "./test-registry.ts";

// The fixtures are other people's code, imported as it was published (fixtures/README.md): a
// project's setup step (`npm ci`) and its own tests, run the way Rhumbatron runs them. Installs come
// from a Verdaccio with no uplinks and a fresh npm cache, so nothing here needs the internet, and a
// missing tarball is a failed install rather than a silent download. Nothing sleeps: each step waits
// for a process to exit or a condition to hold, under vitest's outer limit.

const run = promisify(execFile);
const FIXTURES = resolve(import.meta.dirname, "../../../fixtures");
const TARBALLS = readdirSync(join(FIXTURES, "registry"))
  .filter((f) => f.endsWith(".tgz"))
  .map((f) => join(FIXTURES, "registry", f));

/** @fastify/proxy-addr 5.1.3's suite: test/all.test.js, base.test.js and compile.test.js. */
const JS_LIB_TESTS = 78;
/** inflection 0.3.1's test_inflection.py (parametrized). */
const PY_LIB_TESTS = 450;

let root: string;
const started: LocalRegistry[] = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "rhumbatron-registry-"));
});
afterAll(async () => {
  await Promise.all(started.map((r) => r.stop()));
  if (root) rmSync(root, { recursive: true, force: true });
});

async function registry(name: string, tarballs: string[]): Promise<LocalRegistry> {
  const r = await startLocalRegistry({ dir: join(root, name), tarballs });
  started.push(r);
  return r;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A copy of fixtures/js-lib and the npm settings a sandboxed install gets: an empty user and global
 * config and a cache of its own, so the host's ~/.npmrc and ~/.npm can neither serve nor record it.
 */
function jsProject(name: string) {
  const base = join(root, name);
  const project = join(base, "js-lib");
  cpSync(join(FIXTURES, "js-lib"), project, { recursive: true });
  mkdirSync(join(base, "npm-cache"));
  writeFileSync(join(base, "user.npmrc"), "");
  writeFileSync(join(base, "global.npmrc"), "");
  const env = isolatedNpmEnv({
    npm_config_userconfig: join(base, "user.npmrc"),
    npm_config_globalconfig: join(base, "global.npmrc"),
    npm_config_cache: join(base, "npm-cache"),
  });
  return { project, env };
}

async function npmCi(project: string, env: NodeJS.ProcessEnv, url: string) {
  return run("npm", ["ci", "--registry", url, "--no-audit", "--no-fund"], { cwd: project, env });
}

/** Every element named `name` anywhere under `node` (JUnit nests testsuites to any depth). */
function collect(node: unknown, name: string, into: unknown[] = []): unknown[] {
  if (Array.isArray(node)) for (const n of node) collect(n, name, into);
  else if (node && typeof node === "object")
    for (const [k, v] of Object.entries(node)) {
      if (k === name) into.push(...(Array.isArray(v) ? v : [v]));
      collect(v, name, into);
    }
  return into;
}

function junit(file: string) {
  const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(readFileSync(file, "utf8"));
  const cases = collect(xml, "testcase") as Record<string, unknown>[];
  const bad = cases.filter((c) => "failure" in c || "error" in c || "skipped" in c);
  return { xml, cases: cases.length, bad: bad.length };
}

describe("fixtures against a local registry (Verdaccio, no uplinks)", () => {
  it("installs js-lib with npm ci from the local registry and its suite passes, all tests, in JUnit", async () => {
    const reg = await registry("full", TARBALLS);
    expect(reg.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const { project, env } = jsProject("ok");

    let t = Date.now();
    await npmCi(project, env, reg.url);
    console.info(`npm ci: ${Date.now() - t} ms`);
    const lock = JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8")) as {
      packages: Record<string, { version?: string }>;
    };
    for (const [path, { version }] of Object.entries(lock.packages)) {
      if (!path) continue;
      const installed = JSON.parse(readFileSync(join(project, path, "package.json"), "utf8")) as { version: string };
      expect(installed.version).toBe(version);
    }
    // Where the tarballs came from, as npm's fresh cache recorded it: our registry, never npmjs.
    const index = join(project, "..", "npm-cache", "_cacache", "index-v5");
    const keys = readdirSync(index, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => readFileSync(join(e.parentPath, e.name), "utf8"))
      .join("\n");
    expect(keys).toContain(`${reg.url}ipaddr.js/-/ipaddr.js-2.5.0.tgz`);
    expect(keys).not.toContain("registry.npmjs.org");

    t = Date.now();
    await run("npm", ["test"], { cwd: project, env });
    console.info(`js-lib tests: ${Date.now() - t} ms`);
    const report = junit(join(project, "report.xml"));
    expect(report.cases).toBe(JS_LIB_TESTS);
    expect(report.bad).toBe(0);
  });

  it("fails npm ci when the registry lacks one locked tarball (nothing else serves it)", async () => {
    const missing = TARBALLS.find((f) => f.includes("fastify-forwarded"));
    expect(missing).toBeDefined();
    const reg = await registry(
      "partial",
      TARBALLS.filter((f) => f !== missing),
    );
    const { project, env } = jsProject("missing");
    const failed = await npmCi(project, env, reg.url).then(
      () => null,
      (err: { code?: number; stderr?: string }) => err,
    );
    expect(failed).not.toBeNull();
    expect(failed?.code).not.toBe(0);
    expect(failed?.stderr).toMatch(/E404|404 Not Found/);
    // The 404 came from our registry: npm asked it (not npmjs) for the tarball the lockfile names.
    expect(failed?.stderr).toContain(`${reg.url}@fastify/forwarded/-/forwarded-3.1.2.tgz`);
    expect(existsSync(join(project, "node_modules", "@fastify", "forwarded"))).toBe(false);
  });

  it("runs py-lib's pytest suite with Debian's vendored pytest, not the host's, in JUnit", async () => {
    const base = join(root, "py");
    const project = join(base, "py-lib");
    cpSync(join(FIXTURES, "py-lib"), project, { recursive: true });
    // Debian's pytest from fixtures/debian, unpacked with dpkg-deb (test-pytest.ts).
    const site = vendoredPytestPath();
    // -S: no site module, so no site-packages of the host's Python (where a pip-installed pytest may
    // live): the standard library plus PYTHONPATH, which is the extracted debs and nothing else.
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("PYTHON")) env[k] = v;
    Object.assign(env, { PYTHONPATH: site, PYTHONDONTWRITEBYTECODE: "1" });

    const { stdout: which } = await run(
      "python3",
      ["-S", "-c", "import pytest, pluggy; print(pytest.__file__); print(pluggy.__file__); print(pytest.__version__)"],
      { cwd: project, env },
    );
    const [pytestFile, pluggyFile, version] = which.trim().split("\n");
    expect(pytestFile?.startsWith(site)).toBe(true);
    expect(pluggyFile?.startsWith(site)).toBe(true);
    expect(version).toBe("7.2.1");

    const t = Date.now();
    const xmlFile = join(base, "report.xml");
    await run("python3", ["-S", "-m", "pytest", "-p", "no:cacheprovider", `--junitxml=${xmlFile}`], {
      cwd: project,
      env,
    });
    console.info(`py-lib tests: ${Date.now() - t} ms`);
    const report = junit(xmlFile);
    expect(report.cases).toBe(PY_LIB_TESTS);
    expect(report.bad).toBe(0);
    const suite = collect(report.xml, "testsuite")[0] as Record<string, string>;
    expect(suite).toMatchObject({ tests: String(PY_LIB_TESTS), failures: "0", errors: "0", skipped: "0" });
  });

  it("stop() ends the Verdaccio it started, and only that: the PID is gone and the port is free", async () => {
    const reg = await registry("stop", []);
    expect(alive(reg.pid)).toBe(true);
    const port = Number(new URL(reg.url).port);
    expect((await fetch(`${reg.url}-/ping`)).ok).toBe(true);
    await reg.stop();
    expect(alive(reg.pid)).toBe(false);
    // Nothing listens there any more: a new server can bind the port.
    const free = await new Promise<boolean>((resolve) => {
      const srv = createServer();
      srv.once("error", () => resolve(false));
      srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
    });
    expect(free).toBe(true);
    await reg.stop(); // a second stop is harmless
  });
});
