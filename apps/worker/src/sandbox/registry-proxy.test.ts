import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { SandboxCommand, SandboxWorkspace } from "@rhumbatron/core";
import { type LocalRegistry, startLocalRegistry } from "@rhumbatron/fixtures";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../testing.ts";
import { type BubblewrapSandbox, bubblewrapAvailable, bubblewrapSandbox } from "./bubblewrap.ts";
import { plainProcessSandbox } from "./process.ts";
import { type RegistryProxy, startRegistryProxy } from "./registry-proxy.ts";
import { sandboxLimits } from "./workspace.ts";

// A setup step's network, end to end with real programs and no internet: the real Verdaccio serving
// the fixture tarballs, the proxy on a Unix socket allowing only that Verdaccio, and `npm ci` of
// fixtures/js-lib in bubblewrap. Nothing sleeps: each step waits for a process or a connection.

const FIXTURES = resolve(import.meta.dirname, "../../../../fixtures");
const PROJECT = "proj_6f1c9f8e-0000-4000-8000-0000000000c7";
const T = 120_000;

let root: string;
let registry: LocalRegistry;
let registryPort: number;
let proxy: RegistryProxy;
let sandbox: BubblewrapSandbox;
/** A server on the host that nothing may reach: not in the allow list. */
let forbidden: Server;
let forbiddenPort: number;
let forbiddenConnections = 0;
const refusals: Record<string, unknown>[] = [];

beforeAll(async () => {
  const probe = await bubblewrapAvailable();
  if (!probe.ok) throw new Error(`bubblewrap cannot run here (${probe.reason}); apt-get install -y bubblewrap`);
  root = await mkdtemp(join(tmpdir(), "rhumbatron-proxy-"));
  const tarballs = (await readdir(join(FIXTURES, "registry")))
    .filter((f) => f.endsWith(".tgz"))
    .map((f) => join(FIXTURES, "registry", f));
  registry = await startLocalRegistry({ dir: join(root, "registry"), tarballs });
  registryPort = Number(new URL(registry.url).port);
  proxy = await startRegistryProxy({
    socketPath: join(root, "proxy.sock"),
    allow: [`127.0.0.1:${registryPort}`],
    log: { warn: (fields) => void refusals.push(fields) },
  });
  sandbox = await bubblewrapSandbox({
    root: join(root, "sandboxes"),
    toolchainPaths: [dirname(process.execPath)],
    limits: sandboxLimits(testConfig),
  });
  forbidden = createServer((s) => {
    forbiddenConnections++;
    s.end("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nno");
  });
  await new Promise<void>((r) => forbidden.listen(0, "127.0.0.1", r));
  forbiddenPort = (forbidden.address() as { port: number }).port;
}, 120_000);

afterAll(async () => {
  await proxy?.stop();
  await registry?.stop();
  forbidden?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** A workspace holding a copy of fixtures/js-lib. */
async function jsLib(dirName: string): Promise<SandboxWorkspace> {
  const ws = await sandbox.open({ projectId: PROJECT, dirName });
  await cp(join(FIXTURES, "js-lib"), ws.path, { recursive: true });
  return ws;
}

/** `npm ci` against the local registry, with a cache inside the workspace and no retries to wait out. */
function npmCi(ws: SandboxWorkspace, dirName: string, extra: Partial<SandboxCommand> = {}) {
  return ws.run({
    argv: ["npm", "ci", "--no-audit", "--no-fund", "--registry", registry.url],
    env: {
      npm_config_cache: `/workspace/${dirName}/.npm-cache`,
      npm_config_update_notifier: "false",
      npm_config_fetch_retries: "0",
    },
    timeoutMs: T,
    ...extra,
  });
}

/** A script that sends `GET http://127.0.0.1:<port>/` to the proxy named by HTTP_PROXY and prints the status and body. */
const throughProxy = (port: number) => `
  const p = new URL(process.env.HTTP_PROXY);
  require("http").get({ host: p.hostname, port: p.port, path: "http://127.0.0.1:${port}/" }, (res) => {
    let body = ""; res.on("data", (c) => (body += c));
    res.on("end", () => console.log(res.statusCode + " " + body.trim()));
  }).on("error", (e) => { console.log("error " + e.code); process.exit(3); });`;

/** Sends raw bytes to the proxy's socket from the host and resolves with everything it answers. */
function rawExchange(socketPath: string, text: string): Promise<string> {
  return new Promise((done, fail) => {
    const s = connect(socketPath);
    let answer = "";
    s.on("connect", () => s.write(text));
    s.on("data", (b) => {
      answer += b.toString();
    });
    s.on("end", () => done(answer));
    s.on("error", fail);
  });
}

describe("registry proxy with a bubblewrap setup step", () => {
  it("installs through the proxy, then runs the project's tests without network", async () => {
    const ws = await jsLib("cand-net1");
    const before = proxy.seen().length;
    const install = await npmCi(ws, "cand-net1", { network: { proxySocket: proxy.socketPath } });
    expect(install.stderr + install.stdout).not.toMatch(/ERR!/);
    expect(install).toMatchObject({ exitCode: 0, timedOut: false });
    expect(existsSync(join(ws.path, "node_modules/@fastify/forwarded/package.json"))).toBe(true);
    expect(existsSync(join(ws.path, "node_modules/ipaddr.js/package.json"))).toBe(true);
    const visits = proxy.seen().slice(before);
    expect(visits.length).toBeGreaterThan(0);
    expect(visits.every((v) => v.host === "127.0.0.1" && v.port === registryPort && v.allowed)).toBe(true);

    const tests = await ws.run({ argv: ["npm", "test"], timeoutMs: T });
    expect(tests).toMatchObject({ exitCode: 0, timedOut: false });
    expect(existsSync(join(ws.path, "report.xml"))).toBe(true);
  }, 180_000);

  it("fails the same install without network: the sandbox has none by default", async () => {
    const ws = await jsLib("cand-net2");
    const install = await npmCi(ws, "cand-net2");
    expect(install.exitCode).not.toBe(0);
    expect(install.stderr).toMatch(/ECONNREFUSED|ENETUNREACH|EAI_AGAIN|network/i);
    expect(existsSync(join(ws.path, "node_modules/@fastify/forwarded"))).toBe(false);
  }, 180_000);

  it("refuses a host off the allow list with 403, and a direct connection has no route", async () => {
    const ws = await sandbox.open({ projectId: PROJECT, dirName: "cand-net3" });
    const network = { proxySocket: proxy.socketPath };
    const before = proxy.seen().length;
    const refused = await ws.run({ argv: ["node", "-e", throughProxy(forbiddenPort)], network, timeoutMs: T });
    expect(refused.stdout.trim()).toBe(
      `403 rhumbatron: 127.0.0.1:${forbiddenPort} refused: the setup step may reach only the project's package registries`,
    );
    expect(proxy.seen().slice(before)).toEqual([{ host: "127.0.0.1", port: forbiddenPort, allowed: false }]);
    expect(refusals.at(-1)).toMatchObject({ proxy: "refused", host: "127.0.0.1", port: forbiddenPort });

    // The allowed registry itself, reached around the proxy: the sandbox's loopback is its own.
    const direct = await ws.run({
      argv: [
        "node",
        "-e",
        `require("net").connect(${registryPort}, "127.0.0.1")
          .on("connect", () => { console.log("connected"); process.exit(0); })
          .on("error", (e) => { console.log("failed " + e.code); process.exit(3); });`,
      ],
      network,
      timeoutMs: T,
    });
    expect(direct.stdout.trim()).toBe("failed ECONNREFUSED");
    expect(direct.exitCode).toBe(3);
    expect(forbiddenConnections).toBe(0);
  }, 60_000);

  it("passes the command's exit code through the launcher and keeps the allowlist on argv[0]", async () => {
    const ws = await sandbox.open({ projectId: PROJECT, dirName: "cand-net4" });
    const network = { proxySocket: proxy.socketPath };
    const r = await ws.run({ argv: ["node", "-e", "process.exit(7)"], network, timeoutMs: T });
    expect(r.exitCode).toBe(7);
    await expect(ws.run({ argv: ["curl", "http://127.0.0.1/"], network, timeoutMs: T })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(
      ws.run({ argv: ["node", "-e", "1"], network: { proxySocket: join(root, "missing.sock") }, timeoutMs: T }),
    ).rejects.toMatchObject({ code: "UNAVAILABLE" });
  }, 60_000);
});

describe("registry proxy on the host", () => {
  it("tunnels CONNECT to an allowed host and refuses others with 403", async () => {
    const ping = await rawExchange(
      proxy.socketPath,
      `CONNECT 127.0.0.1:${registryPort} HTTP/1.1\r\nhost: 127.0.0.1:${registryPort}\r\n\r\n` +
        `GET /-/ping HTTP/1.1\r\nhost: 127.0.0.1:${registryPort}\r\nconnection: close\r\n\r\n`,
    );
    expect(ping).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200 OK/);

    const refused = await rawExchange(
      proxy.socketPath,
      `CONNECT 127.0.0.1:${forbiddenPort} HTTP/1.1\r\nhost: 127.0.0.1:${forbiddenPort}\r\n\r\n`,
    );
    expect(refused).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(refused).toContain(`127.0.0.1:${forbiddenPort} refused`);
    expect(proxy.seen().at(-1)).toEqual({ host: "127.0.0.1", port: forbiddenPort, allowed: false });
    expect(forbiddenConnections).toBe(0);
  });

  it("reads a host without a port as 80 and 443, and refuses a bad allow entry", async () => {
    const p = await startRegistryProxy({ socketPath: join(root, "ports.sock"), allow: ["127.0.0.1"] });
    try {
      const answer = await rawExchange(p.socketPath, `CONNECT 127.0.0.1:${registryPort} HTTP/1.1\r\n\r\n`);
      expect(answer).toMatch(/^HTTP\/1\.1 403/);
      // Port 443 is allowed; nothing listens there, so the proxy answers 502 instead of 403.
      const allowed = await rawExchange(p.socketPath, "CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n");
      expect(allowed).toMatch(/^HTTP\/1\.1 502/);
      expect(p.seen()).toEqual([
        { host: "127.0.0.1", port: registryPort, allowed: false },
        { host: "127.0.0.1", port: 443, allowed: true },
      ]);
    } finally {
      await p.stop();
    }
    await expect(startRegistryProxy({ socketPath: join(root, "bad.sock"), allow: ["http://x/"] })).rejects.toThrow(
      /not a host or host:port/,
    );
  });

  it("resolves a name once, and refuses one that resolves to a link-local (metadata) address", async () => {
    const asked: string[] = [];
    const names: Record<string, string> = { "registry.test": "127.0.0.1", "metadata.test": "169.254.169.254" };
    const p = await startRegistryProxy({
      socketPath: join(root, "names.sock"),
      allow: [`Registry.Test:${registryPort}`, "metadata.test"],
      resolve: async (host) => {
        asked.push(host);
        const address = names[host];
        if (!address) throw new Error(`no such host ${host}`);
        return address;
      },
    });
    try {
      const ping = await rawExchange(
        p.socketPath,
        `GET http://registry.test:${registryPort}/-/ping HTTP/1.1\r\nhost: registry.test:${registryPort}\r\nconnection: close\r\n\r\n`,
      );
      expect(ping).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      const metadata = await rawExchange(
        p.socketPath,
        "GET http://metadata.test/latest/meta-data/ HTTP/1.1\r\nhost: metadata.test\r\nconnection: close\r\n\r\n",
      );
      expect(metadata).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
      expect(asked).toEqual(["registry.test", "metadata.test"]);
      expect(p.seen()).toEqual([
        { host: "registry.test", port: registryPort, allowed: true },
        { host: "metadata.test", port: 80, allowed: false },
      ]);
    } finally {
      await p.stop();
    }
  });

  it("replaces a socket left by a dead process, never a live one", async () => {
    const path = join(root, "stale.sock");
    // A process that dies by SIGKILL leaves its socket file behind, with nobody listening.
    const child = spawn(process.execPath, [
      "-e",
      `require("net").createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, "SIGKILL"))`,
    ]);
    await new Promise((r) => child.on("exit", r));
    expect(existsSync(path)).toBe(true);
    const p = await startRegistryProxy({ socketPath: path, allow: [] });
    try {
      await expect(startRegistryProxy({ socketPath: path, allow: [] })).rejects.toMatchObject({ code: "EADDRINUSE" });
      expect(await rawExchange(path, "CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n")).toMatch(/^HTTP\/1\.1 403/);
    } finally {
      await p.stop();
    }
  });

  it("stop() closes the socket and open tunnels, leaving no listener", async () => {
    const p = await startRegistryProxy({ socketPath: join(root, "stop.sock"), allow: [`127.0.0.1:${registryPort}`] });
    // A tunnel left open: stop() must not wait for it.
    const open = connect(p.socketPath);
    const closed = new Promise<void>((r) => open.on("close", () => r()));
    open.on("error", () => {});
    await new Promise<void>((r) => {
      open.on("data", (b) => b.toString().includes("200") && r());
      open.write(`CONNECT 127.0.0.1:${registryPort} HTTP/1.1\r\n\r\n`);
    });
    await p.stop();
    await closed;
    expect(existsSync(p.socketPath)).toBe(false);
    const err = await new Promise<NodeJS.ErrnoException>((r) => connect(p.socketPath).on("error", r));
    expect(err.code).toBe("ENOENT");
    await p.stop(); // twice is fine
  });
});

describe("registry proxy with the plain-process fallback", () => {
  it("points the proxy variables at the proxy, so the allow list holds for tools that use them", async () => {
    const fallback = await plainProcessSandbox({
      root: join(root, "plain"),
      toolchainPaths: [dirname(process.execPath)],
      limits: sandboxLimits(testConfig),
      log: { warn: () => {} },
    });
    const ws = await fallback.open({ projectId: PROJECT, dirName: "cand-net5" });
    const r = await ws.run({
      argv: ["node", "-e", throughProxy(forbiddenPort)],
      network: { proxySocket: proxy.socketPath },
      timeoutMs: T,
    });
    expect(r.stdout.trim()).toMatch(/^403 rhumbatron: 127\.0\.0\.1:\d+ refused/);
    expect(forbiddenConnections).toBe(0);
  }, 60_000);
});
