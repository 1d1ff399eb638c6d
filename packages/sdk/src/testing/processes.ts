import { spawn } from "node:child_process";

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  /** Resolves once stdout holds `text`; rejects, with the output so far, if the process ends first. */
  waitFor(text: string): Promise<void>;
  done: Promise<Finished>;
}

/**
 * The environment a user's shell would give a command: this process's, without the test runner's
 * NODE_OPTIONS, npm's per-script variables (when the tests run under `npm test`) and any RHUMBATRON_*
 * setting of the developer's own.
 */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const keep = new Set(["npm_config_cache", "npm_config_registry", "npm_config_userconfig"]);
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === "NODE_OPTIONS" || k.startsWith("RHUMBATRON_") || k.startsWith("VITEST")) continue;
    if (k.toLowerCase().startsWith("npm_") && !keep.has(k.toLowerCase())) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/**
 * Starts a command (asynchronously: a test's own HTTP server must keep answering it). It is killed
 * after `limitMs`, one generous outer limit, so a hung command fails its test instead of outliving it.
 */
export function start(argv: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; limitMs?: number }): Running {
  const [exe, ...args] = argv as [string, ...string[]];
  const child = spawn(exe, args, { cwd: opts.cwd, env: opts.env ?? userEnv(), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const waiters: { text: string; resolve: () => void }[] = [];
  child.stdout.on("data", (d) => {
    stdout += d;
    for (const w of waiters.filter((x) => stdout.includes(x.text))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  child.stderr.on("data", (d) => (stderr += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), opts.limitMs ?? 120_000);
  const done = new Promise<Finished>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return {
    done,
    waitFor: (text) =>
      stdout.includes(text)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            waiters.push({ text, resolve });
            done.then((r) =>
              reject(
                new Error(`${argv.join(" ")} ended (${r.code}) before printing "${text}":\n${r.stdout}${r.stderr}`),
              ),
            );
          }),
  };
}

/** Runs a command to its end. */
export function run(argv: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; limitMs?: number }) {
  return start(argv, opts).done;
}
