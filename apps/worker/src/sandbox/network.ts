import { lstat, mkdir, readFile, writeFile } from "node:fs/promises";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { DomainError } from "@rhumbatron/core";

/**
 * How a command with `network` (a project's setup step) reaches the host's registry proxy
 * (registry-proxy.ts) while keeping no network of its own. Inside bubblewrap the proxy's Unix socket
 * is bound in, and the worker's launcher below runs first: it listens on the sandbox's own loopback
 * (127.0.0.1, port chosen by the kernel), pipes every connection to that socket, and starts the
 * real command with the proxy variables every package manager reads pointing at that port. The
 * launcher is the worker's, written by the worker and mounted read-only; the project's argv is
 * checked against the allowlist exactly as without network.
 */

/** Where the proxy's socket appears inside the sandbox. */
export const PROXY_SOCKET_INSIDE = "/run/rhumbatron-proxy.sock";
/** Where the launcher's folder appears inside the sandbox (read-only). */
export const LAUNCHER_DIR_INSIDE = "/run/rhumbatron-launcher";
export const LAUNCHER_FILE = "launcher.cjs";

/** The variables curl, npm, pip, yarn and most HTTP clients read to find a proxy. */
const PROXY_VARIABLES = [
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "http_proxy",
  "https_proxy",
  "npm_config_proxy",
  "npm_config_https_proxy",
];

/** Every proxy variable set to `url`, and NO_PROXY empty so no host bypasses it. */
export function proxyEnv(url: string): Record<string, string> {
  return { ...Object.fromEntries(PROXY_VARIABLES.map((k) => [k, url])), NO_PROXY: "", no_proxy: "" };
}

/**
 * The launcher: `node launcher.cjs <socket> <argv…>`. CommonJS with nothing but Node's built-ins,
 * so it runs on whatever node the sandbox has. It exits with the command's code, or dies of the
 * command's signal, as soon as the command exits.
 */
export const LAUNCHER_SOURCE = `"use strict";
// Written by the Rhumbatron worker (apps/worker/src/sandbox/network.ts); do not edit.
const net = require("node:net");
const { spawn } = require("node:child_process");
const [socketPath, ...argv] = process.argv.slice(2);
const names = ${JSON.stringify(PROXY_VARIABLES)};

const forwarder = net.createServer((inside) => {
  const outside = net.connect(socketPath);
  inside.pipe(outside);
  outside.pipe(inside);
  inside.on("error", () => outside.destroy());
  outside.on("error", () => inside.destroy());
  inside.on("close", () => outside.destroy());
  outside.on("close", () => inside.destroy());
});

forwarder.listen(0, "127.0.0.1", () => {
  const url = "http://127.0.0.1:" + forwarder.address().port;
  const env = { ...process.env, NO_PROXY: "", no_proxy: "" };
  for (const k of names) env[k] = url;
  const child = spawn(argv[0], argv.slice(1), { stdio: "inherit", env });
  const pass = (sig) => child.kill(sig);
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(sig, pass);
  child.on("error", (err) => {
    process.stderr.write(argv[0] + ": " + err.message + "\\n");
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    forwarder.close();
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
});
`;

/**
 * Writes the launcher into `dir` (created if needed, read-only for the sandbox as it is mounted
 * with --ro-bind) unless it is already there as written; returns the folder.
 */
export async function writeLauncher(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, LAUNCHER_FILE);
  const current = await readFile(file, "utf8").catch(() => null);
  if (current !== LAUNCHER_SOURCE) await writeFile(file, LAUNCHER_SOURCE, { mode: 0o644 });
  return dir;
}

/** Refuses a command whose proxy socket is missing before anything starts (bwrap would fail less clearly). */
export async function assertProxySocket(path: string): Promise<void> {
  const st = await lstat(path).catch(() => null);
  if (!st?.isSocket()) {
    throw new DomainError("UNAVAILABLE", `the registry proxy's socket ${path} is not there (is the proxy running?)`);
  }
}

/**
 * The plain-process fallback's forwarder: a host listener on 127.0.0.1 piping each connection to
 * the proxy's socket, so the proxy variables lead through the allow list there too. Unlike in
 * bubblewrap, a command that ignores those variables is NOT stopped: the fallback has the host's network.
 */
export async function openLoopbackForwarder(socketPath: string): Promise<{ url: string; close(): Promise<void> }> {
  const open = new Set<Socket>();
  const server: Server = createServer((inside) => {
    const outside = connect(socketPath);
    for (const [a, b] of [
      [inside, outside],
      [outside, inside],
    ] as const) {
      open.add(a);
      a.pipe(b);
      a.on("error", () => b.destroy());
      a.on("close", () => {
        open.delete(a);
        b.destroy();
      });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of open) s.destroy();
      await closed;
    },
  };
}
