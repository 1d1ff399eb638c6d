import { lookup } from "node:dns/promises";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import { connect, isIP, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import type { SandboxLog } from "./workspace.ts";

/**
 * The host side of a setup step's network (SandboxCommand.network): an HTTP proxy on a Unix socket
 * that lets through only the project's package registries. It runs in the worker, outside the
 * Sandbox, so nothing the setup step starts can change the allow list; the Sandbox reaches it only
 * through the socket bound into it (bubblewrap.ts), having no network of its own.
 *
 * Two request forms, the two a package manager sends through a proxy: `CONNECT host:port` (HTTPS:
 * after a 200 the bytes are piped both ways, unread) and absolute-form HTTP (`GET http://host/path`,
 * what npm sends for an http:// registry), forwarded with bodies streamed both ways.
 */
export interface RegistryProxyOptions {
  /**
   * Where to listen; the caller owns the directory (keep it private to the worker's user). A socket
   * already there that nobody answers (left by a worker that died) is replaced; a live one is not.
   */
  socketPath: string;
  /** `host` (ports 80 and 443) or `host:port`; `[v6]` or `[v6]:port` for an IPv6 address. */
  allow: readonly string[];
  /** Told about every refusal, so an operator sees which host a setup step wanted. */
  log?: SandboxLog;
  /** A host name's address; default: the system resolver (dns.lookup). Tests pass their own. */
  resolve?: (host: string) => Promise<string>;
}

export interface ProxyVisit {
  host: string;
  port: number;
  allowed: boolean;
}

export interface RegistryProxy {
  socketPath: string;
  /** Closes the socket and every connection through it; resolves once nothing listens. */
  stop(): Promise<void>;
  /** Every destination asked for, in order, and whether it was let through. */
  seen(): ProxyVisit[];
}

/** Where cloud metadata services answer (169.254.169.254): never reached by a name, only by an IP the allow list spells out. */
function linkLocal(address: string): boolean {
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  if (isIP(v4) === 4) return v4.startsWith("169.254.");
  return /^fe[89ab][0-9a-f]:/i.test(address);
}

/** `host[:port]` or `[v6][:port]`, host lower-cased without a trailing dot; port null when absent. */
function splitHostPort(text: string): { host: string; port: number | null } | null {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(text.trim());
  if (!m) return null;
  const host = (m[1] ?? m[2] ?? "").toLowerCase().replace(/\.$/, "");
  const port = m[3] === undefined ? null : Number(m[3]);
  if (!host || (port !== null && (port < 1 || port > 65535))) return null;
  return { host, port };
}

/** The allow list as `host:port` keys; a bad entry throws (a typo must not silently allow nothing). */
function allowedKeys(allow: readonly string[]): Set<string> {
  const keys = new Set<string>();
  for (const entry of allow) {
    const parsed = splitHostPort(entry);
    if (!parsed) throw new Error(`registry proxy: not a host or host:port: ${JSON.stringify(entry)}`);
    for (const port of parsed.port === null ? [80, 443] : [parsed.port]) keys.add(`${parsed.host}:${port}`);
  }
  return keys;
}

const refusalBody = (host: string, port: number) =>
  `rhumbatron: ${host}:${port} refused: the setup step may reach only the project's package registries\n`;

/** Request headers that describe the hop to the proxy, not the request: never passed on. */
const HOP_HEADERS = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authorization", "upgrade", "te"]);

function passOn(headers: IncomingMessage["headers"]): IncomingMessage["headers"] {
  const named = String(headers.connection ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase());
  const out: IncomingMessage["headers"] = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP_HEADERS.has(k) && !named.includes(k)) out[k] = v;
  return out;
}

/** Whether something accepts connections on the Unix socket at `path`. */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
}

export async function startRegistryProxy(options: RegistryProxyOptions): Promise<RegistryProxy> {
  const keys = allowedKeys(options.allow);
  const visits: ProxyVisit[] = [];
  const tunnels = new Set<Duplex>();
  const resolveName = options.resolve ?? (async (host: string) => (await lookup(host)).address);

  /**
   * The address to connect to, or null when refused (recorded either way). The name is resolved
   * once and that address is used, so a second lookup cannot answer differently (DNS rebinding).
   */
  async function decide(host: string, port: number): Promise<string | null> {
    let address: string | null = null;
    if (keys.has(`${host}:${port}`)) {
      address = isIP(host) ? host : await resolveName(host).catch(() => null);
      if (address && !isIP(host) && linkLocal(address)) address = null;
    }
    visits.push({ host, port, allowed: address !== null });
    if (address === null) options.log?.warn({ proxy: "refused", host, port }, `registry proxy refused ${host}:${port}`);
    return address;
  }

  const server = createServer((req, res) => void forward(decide, req, res));
  server.on(
    "connect",
    (req: IncomingMessage, client: Duplex, head: Buffer) => void tunnel(decide, tunnels, req, client, head),
  );
  server.on("clientError", (_err, socket) => socket.destroy());

  await listenOn(server, options.socketPath);
  // Only the worker's user (which the Sandbox's uid maps to) may connect.
  await chmod(options.socketPath, 0o600);

  return {
    socketPath: options.socketPath,
    seen: () => visits.map((v) => ({ ...v })),
    async stop() {
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const s of tunnels) s.destroy();
      await closed;
      await rm(options.socketPath, { force: true });
    },
  };
}

/** The address to connect to for host:port, or null when refused. */
type Decide = (host: string, port: number) => Promise<string | null>;

function refuse(res: ServerResponse, status: number, body: string) {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", connection: "close" }).end(body);
}

/** A plain-HTTP request in absolute form, sent on to an allowed host. */
async function forward(decide: Decide, req: IncomingMessage, res: ServerResponse) {
  let url: URL;
  try {
    url = new URL(req.url ?? "");
  } catch {
    return refuse(res, 400, "rhumbatron: this is a proxy: send absolute-form requests or CONNECT\n");
  }
  const target = splitHostPort(url.host);
  if (url.protocol !== "http:" || !target) return refuse(res, 400, `rhumbatron: cannot proxy ${url.protocol}\n`);
  const port = target.port ?? 80;
  const address = await decide(target.host, port);
  if (!address) return refuse(res, 403, refusalBody(target.host, port));
  const upstream = request(
    {
      host: address,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: passOn(req.headers),
      agent: false,
    },
    (answer) => {
      const headers = passOn(answer.headers);
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
      answer.pipe(res);
    },
  );
  upstream.on("error", (err) => {
    if (!res.headersSent) refuse(res, 502, `rhumbatron: ${target.host}:${port}: ${err.message}\n`);
    else res.destroy();
  });
  res.on("close", () => upstream.destroy());
  req.pipe(upstream);
}

/** A CONNECT to an allowed host and port: the bytes pass both ways untouched (TLS stays end to end). */
async function tunnel(decide: Decide, tunnels: Set<Duplex>, req: IncomingMessage, client: Duplex, head: Buffer) {
  tunnels.add(client);
  client.on("close", () => tunnels.delete(client));
  client.on("error", () => client.destroy());
  const target = splitHostPort(req.url ?? "");
  if (!target || target.port === null) {
    client.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
    return;
  }
  const address = await decide(target.host, target.port);
  if (!address) {
    const body = refusalBody(target.host, target.port);
    client.end(
      `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
    return;
  }
  const upstream: Socket = connect(target.port, address);
  let connected = false;
  tunnels.add(upstream);
  upstream.on("close", () => {
    tunnels.delete(upstream);
    if (connected) client.destroy();
  });
  client.on("close", () => upstream.destroy());
  upstream.on("error", (err) => {
    if (connected) client.destroy();
    else client.end(`HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\nrhumbatron: ${err.message}\n`);
  });
  upstream.on("connect", () => {
    connected = true;
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
}

/** Listens on the Unix socket; a socket left by a worker that died (nobody answers it) is replaced. */
async function listenOn(server: Server, socketPath: string): Promise<void> {
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    });
  await listen().catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== "EADDRINUSE" || (await answers(socketPath))) throw err;
    await rm(socketPath, { force: true });
    await listen();
  });
}

/**
 * Runs `run` with a proxy of its own that lets through only `allow` (host or host:port), reached
 * from inside the Sandbox over a Unix socket (SandboxCommand.network), and stops it when `run`
 * ends. Returns what it reached and what it refused, as `host:port`, once each.
 */
export async function withAllowedHosts<T>(
  allow: readonly string[],
  run: (network: { proxySocket: string }) => Promise<T>,
  options: Pick<RegistryProxyOptions, "log" | "resolve"> = {},
): Promise<{ result: T; reached: string[]; refused: string[] }> {
  // Unix socket paths are short (108 bytes): a folder of its own under the system's temporary folder.
  const dir = await mkdtemp(join(tmpdir(), "rbp-"));
  try {
    const proxy = await startRegistryProxy({ socketPath: join(dir, "p.sock"), allow: [...allow], ...options });
    try {
      const result = await run({ proxySocket: proxy.socketPath });
      const seen = proxy.seen();
      const hosts = (allowed: boolean) => [
        ...new Set(seen.filter((s) => s.allowed === allowed).map((s) => `${s.host}:${s.port}`)),
      ];
      return { result, reached: hosts(true), refused: hosts(false) };
    } finally {
      await proxy.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
