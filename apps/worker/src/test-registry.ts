import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { freePort } from "@rhumbatron/db/testing";

const run = promisify(execFile);

/**
 * A Verdaccio this process started, serving only the tarballs it was given. Tests install a
 * fixture's dependencies from it, so an install never reaches the internet and never depends on
 * what happens to be in the host's npm cache.
 */
export interface LocalRegistry {
  /** Base URL with a trailing slash, e.g. http://127.0.0.1:41234/ (what `--registry` takes). */
  url: string;
  /** The Verdaccio process's PID: the only process stop() signals. */
  pid: number;
  /** Stops that process and resolves once it has exited (and been reaped). Safe to call twice. */
  stop(): Promise<void>;
}

export interface LocalRegistryOptions {
  /** A folder of its own: config.yaml, storage, htpasswd, the publishing .npmrc and npm cache go here. */
  dir: string;
  /** Package tarballs (`npm pack` output) to publish, each exactly as it is (so lockfile integrities hold). */
  tarballs: string[];
  /** How long startup and publishing may take in all before we give up (a deadline, not a wait). */
  timeoutMs?: number;
}

/** Where Verdaccio's CLI lives: resolved like an import, so a hoisted or nested install both work. */
function verdaccioBin(): string {
  const require = createRequire(import.meta.url);
  return join(resolve(require.resolve("verdaccio/package.json"), ".."), "bin", "verdaccio");
}

/**
 * The configuration: no `uplinks` at all, so a package that was not published here is a 404 and
 * never a fetch from registry.npmjs.org. Verdaccio 6 refuses anonymous publishes from npm (npm
 * itself demands a token), so publishing is for `$authenticated` and we register a throwaway user
 * in an htpasswd file inside `dir`. Reading is open to everyone, as `npm ci` sends no token.
 * The web UI and the audit middleware (which would proxy `npm audit` to npmjs) are off.
 */
function configYaml(dir: string): string {
  const q = (p: string) => JSON.stringify(p);
  return [
    `storage: ${q(join(dir, "storage"))}`,
    "auth:",
    "  htpasswd:",
    `    file: ${q(join(dir, "htpasswd"))}`,
    "    max_users: 1",
    "packages:",
    "  '**':",
    "    access: $all",
    "    publish: $authenticated",
    "    unpublish: $authenticated",
    "middlewares:",
    "  audit:",
    "    enabled: false",
    "web:",
    "  enable: false",
    "log:",
    "  type: stdout",
    "  format: json",
    "  level: warn",
    "",
  ].join("\n");
}

/**
 * The environment for the npm commands we run: the host's, minus every `npm_config_*` (when tests
 * run under `npm run`, npm exports the user's userconfig, cache and registry that way, and those
 * must not leak in), plus what is given.
 */
export function isolatedNpmEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_config_/i.test(k)) env[k] = v;
  return { ...env, npm_config_update_notifier: "false", ...extra };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves when `check` returns true; rejects when `failed` returns a reason or the deadline passes. */
async function until(
  what: string,
  check: () => Promise<boolean>,
  deadline: number,
  failed: () => string | null,
): Promise<void> {
  for (;;) {
    const why = failed();
    if (why) throw new Error(`${what}: ${why}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within the time allowed`);
    await pause(50); // the poll's interval, not a guess at how long Verdaccio takes
  }
}

/** Sends SIGTERM to our child and waits for its exit event; SIGKILL if it ignores that past a deadline. */
async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts the real Verdaccio (its CLI, on 127.0.0.1 only, a free port), waits until it answers
 * /-/ping, registers a throwaway user, publishes every tarball with `npm publish` (a `.npmrc` and
 * npm cache inside `dir`, so the user's ~/.npmrc and cache are never read or written), and waits
 * until each published version is listed in its package's metadata.
 */
export async function startLocalRegistry(options: LocalRegistryOptions): Promise<LocalRegistry> {
  const dir = resolve(options.dir);
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  mkdirSync(dir, { recursive: true });
  const config = join(dir, "config.yaml");
  writeFileSync(config, configYaml(dir));

  // freePort() lets go of the port before Verdaccio binds it, so another process can take it in
  // between; Verdaccio then exits with EADDRINUSE and we try again on another port.
  for (let attempt = 1; ; attempt++) {
    const server = launch(config, dir, await freePort());
    try {
      await until(
        "Verdaccio answering /-/ping",
        async () => (await fetch(`${server.url}-/ping`)).ok,
        deadline,
        server.failed,
      );
    } catch (err) {
      await server.stop();
      if (attempt < 3 && /EADDRINUSE/.test(String(server.failed()))) continue;
      throw err;
    }
    try {
      await publishAll(server.url, dir, options.tarballs, deadline, server.failed);
    } catch (err) {
      await server.stop();
      throw err;
    }
    return { url: server.url, pid: server.pid, stop: server.stop };
  }
}

/** Spawns Verdaccio's CLI on 127.0.0.1:`port`, keeping the tail of its output for error messages. */
function launch(config: string, dir: string, port: number) {
  const url = `http://127.0.0.1:${port}/`;
  const child = spawn(process.execPath, [verdaccioBin(), "--config", config, "--listen", `127.0.0.1:${port}`], {
    cwd: dir,
    env: process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (c: Buffer) => {
    output = (output + c.toString("utf8")).slice(-8_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let exitReason: string | null = null;
  const exited = new Promise<void>((done) => {
    child.once("exit", (code, signal) => {
      exitReason = `Verdaccio exited (code ${code}, signal ${signal}):\n${output}`;
      done();
    });
    child.once("error", (err) => {
      exitReason = `Verdaccio could not start: ${err.message}`;
      done();
    });
  });
  return {
    url,
    // undefined only when spawn failed, and then `failed` says so before anything uses the PID
    pid: child.pid ?? -1,
    failed: (): string | null => exitReason,
    stop: () => stopChild(child, exited),
  };
}

async function publishAll(
  url: string,
  dir: string,
  tarballs: string[],
  deadline: number,
  failed: () => string | null,
): Promise<void> {
  if (tarballs.length === 0) return;
  // A user made for this registry alone; Verdaccio answers the registration with a token.
  const user = "fixtures";
  const res = await fetch(`${url}-/user/org.couchdb.user:${user}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: user, password: randomBytes(16).toString("hex") }),
  });
  const { token } = (await res.json()) as { token?: string };
  if (!res.ok || !token) throw new Error(`Verdaccio did not register a publishing user (HTTP ${res.status})`);

  const userconfig = join(dir, "publish.npmrc");
  writeFileSync(userconfig, `//${new URL(url).host}/:_authToken=${token}\n`, { mode: 0o600 });
  const globalconfig = join(dir, "global.npmrc");
  writeFileSync(globalconfig, "");
  const env = isolatedNpmEnv({
    npm_config_userconfig: userconfig,
    npm_config_globalconfig: globalconfig,
    npm_config_cache: join(dir, "npm-cache"),
  });

  for (const tgz of tarballs) {
    const { stdout } = await run("npm", ["publish", resolve(tgz), "--registry", url, "--ignore-scripts", "--json"], {
      cwd: dir,
      env,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: { stderr?: string; message: string }) => {
      throw new Error(`npm publish ${tgz} failed: ${err.stderr || err.message}`);
    });
    const { name, version } = publishedId(stdout);
    const meta = `${url}${name.replace("/", "%2f")}`;
    await until(
      `${name}@${version} listed by the registry`,
      async () => {
        const r = await fetch(meta);
        if (!r.ok) return false;
        const doc = (await r.json()) as { versions?: Record<string, unknown> };
        return Boolean(doc.versions?.[version]);
      },
      deadline,
      failed,
    );
  }
}

/**
 * The name and version `npm publish --json` reports. npm 10 prints one object; npm 11 may key it by
 * the package name; either way it carries `name` and `version`.
 */
function publishedId(stdout: string): { name: string; version: string } {
  const parsed = JSON.parse(stdout.slice(stdout.indexOf("{"))) as Record<string, unknown>;
  const candidates = [parsed, ...Object.values(parsed)];
  for (const c of candidates) {
    if (c && typeof c === "object") {
      const { name, version } = c as { name?: unknown; version?: unknown };
      if (typeof name === "string" && typeof version === "string") return { name, version };
    }
  }
  throw new Error(`npm publish --json printed no name and version: ${stdout}`);
}
