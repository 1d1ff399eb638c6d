import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { type Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { isDomainError, isRepoName, loadConfig } from "@rhumbatron/core";
import type { Logger } from "../logger.ts";

/**
 * Read-only git smart-HTTP ("stateless-rpc") endpoint over the canonical bare repositories, so a
 * person can `git clone` / `git fetch` a project's source with a short-lived read token.
 *
 *   GET  /git/<repo>.git/info/refs?service=git-upload-pack   ref advertisement
 *   POST /git/<repo>.git/git-upload-pack                     negotiation + packfile
 *
 * Push (git-receive-pack) is offered on one route only, to a project waiting for its push
 * (docs/repositories.md,
 * Pushing into an empty project), with that project's one-time push token:
 *
 *   GET  /git/push/<projectId>.git/info/refs?service=git-receive-pack   an empty repository's refs
 *   POST /git/push/<projectId>.git/git-receive-pack                     the push, into a quarantine
 *
 * Each request is checked on its own: the protocol is stateless, so the token is verified on
 * info/refs and again on every POST.
 */
export interface GitHttpOptions {
  /** `<dataDir>/git/rhumbatron-projects-<env>`; repositories are bare, named by Project ID. */
  repoRoot: string;
  /** Throws DomainError("FORBIDDEN") when `token` may not read `repo`. */
  authorize: (repo: string, token: string | null) => Promise<void>;
  gitBinary?: string;
  logger?: Pick<Logger, "info" | "warn">;
  /** The largest upload-pack request body read, after gzip (413 beyond it); default `source.gitRequestMaxBytes`. */
  maxRequestBytes?: number;
  /** Pushes into projects waiting for one; without it every push is refused (403). */
  push?: PushOptions;
}

export interface PushOptions {
  /** Where pushes are received, each into its own new bare repository; never inside `repoRoot`. */
  quarantineRoot: string;
  /** Throws DomainError("FORBIDDEN") unless `token` is the live push token of the waiting project. */
  authorize: (projectId: string, token: string) => Promise<void>;
  /**
   * Takes a received push (spends the token, starts provisioning from `quarantine`); throws
   * DomainError("FORBIDDEN") when it may no longer (another push won, the token was replaced).
   */
  accept: (projectId: string, token: string, quarantine: string) => Promise<void>;
  /** The largest receive-pack request body read, after gzip (413 beyond it); default `source.pushMaxBytes`. */
  maxRequestBytes?: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

// The repo segment is matched literally (no percent-decoding): valid names are [a-z0-9_-] only.
const ROUTE = /^\/git\/([^/]+)\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;
const PUSH_ROUTE = /^\/git\/push\/(proj_[0-9a-f-]{36})\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;
const ADVERTISEMENT = "application/x-git-upload-pack-advertisement";
const RESULT = "application/x-git-upload-pack-result";
const PUSH_ADVERTISEMENT = "application/x-git-receive-pack-advertisement";
const PUSH_RESULT = "application/x-git-receive-pack-result";
// Nothing of the pusher's runs or configures git here: no hooks, no templates copied into a new repository.
const NO_HOOKS = ["-c", "core.hooksPath=/dev/null"];

export function createGitHttpHandler({
  repoRoot,
  authorize,
  gitBinary = "git",
  logger,
  maxRequestBytes = loadConfig().source.gitRequestMaxBytes,
  push,
}: GitHttpOptions): Handler {
  const git = (args: string[]): ChildProcess =>
    // No shell, and only PATH: nothing from the worker's environment (tokens, GIT_* overrides) reaches git.
    spawn(gitBinary, args, {
      // Cast: Next's types (the web app imports the worker) make NODE_ENV a required variable.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } as unknown as NodeJS.ProcessEnv,
      stdio: ["pipe", "pipe", "pipe"],
    });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A NUL, a backslash or an encoded dot or slash never belongs to a route; refused before anything is read.
    const raw = req.url ?? "/";
    if (raw.includes("\u0000") || raw.includes("\\") || /%(00|2e|2f|5c)/i.test(raw)) return send(res, 404, "not found");
    const url = new URL(raw, "http://localhost");
    const pushRoute = PUSH_ROUTE.exec(url.pathname);
    if (pushRoute) return handlePush(req, res, pushRoute[1] ?? "", pushRoute[2] ?? "", url.searchParams.get("service"));
    const m = ROUTE.exec(url.pathname);
    if (!m) return send(res, 404, "not found");
    const [, repo = "", route] = m;
    const service = url.searchParams.get("service");
    if (route === "git-receive-pack" || (route === "info/refs" && service === "git-receive-pack")) {
      return send(res, 403, "push is not offered");
    }
    const isRefs = route === "info/refs" && req.method === "GET" && service === "git-upload-pack";
    const isPack = route === "git-upload-pack" && req.method === "POST";
    if (!isRefs && !isPack) return send(res, 404, "not found");

    // isRepoName admits only [a-z0-9_-], so the joined path cannot leave repoRoot.
    const dir = join(repoRoot, repo);
    if (!isRepoName(repo) || !(await isBareRepo(dir))) return send(res, 404, "repository not found");

    const token = tokenFrom(req.headers.authorization);
    if (!token) {
      // A 401 with a Basic challenge makes git retry with the URL's credentials, or fail cleanly.
      return send(res, 401, "a read token is required", { "WWW-Authenticate": 'Basic realm="rhumbatron"' });
    }
    try {
      await authorize(repo, token);
    } catch (err) {
      if (isDomainError(err) && err.code === "FORBIDDEN") return send(res, 403, err.message);
      if (isDomainError(err) && err.code === "NOT_FOUND") return send(res, 404, "repository not found");
      throw err;
    }

    if (isRefs) return advertise(res, repo, dir);
    return uploadPack(req, res, repo, dir);
  }

  async function advertise(res: ServerResponse, repo: string, dir: string, service = "upload-pack"): Promise<void> {
    // Buffered (ref lists are small) so a git failure can still become a clean 500.
    const args =
      service === "upload-pack"
        ? ["upload-pack", "--strict", "--stateless-rpc", "--advertise-refs", dir]
        : [...NO_HOOKS, "receive-pack", "--stateless-rpc", "--advertise-refs", dir];
    const child = git(args);
    killOnClientGone(res, child);
    child.stdin?.end();
    const chunks: Buffer[] = [];
    child.stdout?.on("data", (c: Buffer) => chunks.push(c));
    const { code, stderr } = await exited(child);
    if (code !== 0) return gitFailed(res, repo, code, stderr);
    // Smart-HTTP framing: the service announcement pkt-line and a flush precede git's own output.
    const type = service === "upload-pack" ? ADVERTISEMENT : PUSH_ADVERTISEMENT;
    res.writeHead(200, { "Content-Type": type, "Cache-Control": "no-cache" });
    res.end(Buffer.concat([Buffer.from(`${pktLine(`# service=git-${service}\n`)}0000`), ...chunks]));
  }

  async function uploadPack(req: IncomingMessage, res: ServerResponse, repo: string, dir: string): Promise<void> {
    const encoding = (req.headers["content-encoding"] ?? "identity").toLowerCase();
    if (!["identity", "gzip", "x-gzip"].includes(encoding)) return send(res, 415, "unsupported content encoding");
    if (Number(req.headers["content-length"]) > maxRequestBytes) return tooLarge(req, res);
    const child = git(["upload-pack", "--strict", "--stateless-rpc", dir]);
    killOnClientGone(res, child);
    const stdin = child.stdin as NodeJS.WritableStream;
    const body: Readable = encoding === "identity" ? req : req.pipe(createGunzip());
    // Counted after gzip, so a small compressed body cannot unpack into an unbounded one.
    let overLimit = false;
    const limit = byteLimit(maxRequestBytes, () => {
      overLimit = true;
    });
    // A bad gzip body, a body over the limit or a vanished client ends the exchange; git's exit status decides the answer.
    pipeline(body, limit, stdin).catch(() => child.kill("SIGKILL"));

    // Headers go out with git's first byte, so a git that fails before answering still gets a 500.
    child.stdout?.on("data", (chunk: Buffer) => {
      if (!res.headersSent) res.writeHead(200, { "Content-Type": RESULT, "Cache-Control": "no-cache" });
      if (!res.write(chunk)) {
        child.stdout?.pause();
        res.once("drain", () => child.stdout?.resume());
      }
    });
    const { code, stderr } = await exited(child);
    if (overLimit && !res.headersSent) return tooLarge(req, res);
    if (res.headersSent) {
      // Whatever git wrote (possibly an ERR pkt-line) is the client's to read.
      res.end();
      if (code !== 0) logger?.warn({ repo, code, stderr }, "git upload-pack failed mid-response");
      return;
    }
    if (code !== 0) return gitFailed(res, repo, code, stderr);
    res.writeHead(200, { "Content-Type": RESULT, "Cache-Control": "no-cache" }).end();
  }

  function tooLarge(req: IncomingMessage, res: ServerResponse, max = maxRequestBytes): void {
    // Unread bytes stay unread: the connection closes after the answer instead of draining them.
    res.setHeader("Connection", "close");
    send(res, 413, `the request body is larger than ${max} bytes`);
    req.resume();
  }

  async function handlePush(
    req: IncomingMessage,
    res: ServerResponse,
    projectId: string,
    route: string,
    service: string | null,
  ): Promise<void> {
    const isRefs = route === "info/refs" && req.method === "GET" && service === "git-receive-pack";
    const isPack = route === "git-receive-pack" && req.method === "POST";
    if (!isRefs && !isPack) return send(res, 404, "not found");
    if (!push) return send(res, 403, "push is not offered");
    const token = tokenFrom(req.headers.authorization);
    if (!token) return send(res, 401, "a push token is required", { "WWW-Authenticate": 'Basic realm="rhumbatron"' });
    try {
      await push.authorize(projectId, token);
    } catch (err) {
      if (isDomainError(err) && (err.code === "FORBIDDEN" || err.code === "NOT_FOUND"))
        return send(res, 403, err.message);
      throw err;
    }
    await mkdir(push.quarantineRoot, { recursive: true });
    if (isRefs) {
      // A waiting project has no refs: the advertisement of a new empty repository, made and dropped here.
      const empty = await mkdtemp(join(push.quarantineRoot, "advertise-"));
      try {
        if (!(await initBare(empty))) return send(res, 500, "git failed");
        return await advertise(res, projectId, empty, "receive-pack");
      } finally {
        await rm(empty, { recursive: true, force: true });
      }
    }
    const quarantine = join(push.quarantineRoot, `${projectId}-${randomUUID()}.git`);
    let kept = false;
    try {
      if (!(await initBare(quarantine))) return send(res, 500, "git failed");
      kept = await receivePack(req, res, projectId, token, quarantine, push);
    } finally {
      if (!kept) await rm(quarantine, { recursive: true, force: true });
    }
  }

  /** A new bare repository with no hooks and no template files; false when git failed. */
  async function initBare(dir: string): Promise<boolean> {
    const child = git([...NO_HOOKS, "init", "--bare", "--quiet", "--template=", dir]);
    child.stdin?.end();
    const { code, stderr } = await exited(child);
    if (code !== 0) logger?.warn({ dir, code, stderr }, "git init failed");
    return code === 0;
  }

  /**
   * Receives the push into `quarantine`, then hands it over with `accept`. git's answer is held until
   * then, so a push that loses (another won, the token went stale) is answered 403, not "ok".
   * Returns true when the quarantine was handed over (and must be kept).
   */
  async function receivePack(
    req: IncomingMessage,
    res: ServerResponse,
    projectId: string,
    token: string,
    quarantine: string,
    options: PushOptions,
  ): Promise<boolean> {
    const max = options.maxRequestBytes ?? loadConfig().source.pushMaxBytes;
    const encoding = (req.headers["content-encoding"] ?? "identity").toLowerCase();
    if (!["identity", "gzip", "x-gzip"].includes(encoding)) {
      send(res, 415, "unsupported content encoding");
      return false;
    }
    if (Number(req.headers["content-length"]) > max) {
      tooLarge(req, res, max);
      return false;
    }
    const child = git([
      ...NO_HOOKS,
      "-c",
      `receive.maxInputSize=${max}`,
      "receive-pack",
      "--stateless-rpc",
      quarantine,
    ]);
    killOnClientGone(res, child);
    const body: Readable = encoding === "identity" ? req : req.pipe(createGunzip());
    let overLimit = false;
    const limit = byteLimit(max, () => {
      overLimit = true;
    });
    pipeline(body, limit, child.stdin as NodeJS.WritableStream).catch(() => child.kill("SIGKILL"));
    const out: Buffer[] = [];
    child.stdout?.on("data", (c: Buffer) => out.push(c));
    const { code, stderr } = await exited(child);
    if (overLimit) {
      tooLarge(req, res, max);
      return false;
    }
    if (code !== 0) {
      gitFailed(res, projectId, code, stderr, "receive-pack");
      return false;
    }
    const answer = () =>
      res.writeHead(200, { "Content-Type": PUSH_RESULT, "Cache-Control": "no-cache" }).end(Buffer.concat(out));
    // A request that updated no ref (git's probe before a large push, a push git refused to unpack): nothing to take.
    if (!(await hasRefs(quarantine))) {
      answer();
      return false;
    }
    try {
      await options.accept(projectId, token, quarantine);
    } catch (err) {
      if (isDomainError(err) && err.code === "FORBIDDEN") {
        send(res, 403, err.message);
        return false;
      }
      throw err;
    }
    logger?.info({ projectId }, "push received; provisioning");
    answer();
    return true;
  }

  /** Whether the repository holds any ref (a file under refs/ or a packed ref). */
  async function hasRefs(dir: string): Promise<boolean> {
    const child = git(["--git-dir", dir, "for-each-ref", "--count=1", "--format=%(refname)"]);
    child.stdin?.end();
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString("utf8");
    });
    const { code } = await exited(child);
    return code === 0 && out.trim() !== "";
  }

  function gitFailed(
    res: ServerResponse,
    repo: string,
    code: number | null,
    stderr: string,
    what = "upload-pack",
  ): void {
    // stderr names server paths: it goes to the log, never to the client.
    logger?.warn({ repo, code, stderr }, `git ${what} failed`);
    send(res, 500, "git failed");
  }

  return (req, res) => {
    const started = Date.now();
    res.on("finish", () =>
      logger?.info(
        { method: req.method, path: req.url?.split("?")[0], status: res.statusCode, ms: Date.now() - started },
        "git http",
      ),
    );
    handle(req, res).catch((err: unknown) => {
      logger?.warn({ err }, "git http request failed");
      if (!res.headersSent) send(res, 500, "internal error");
      else res.destroy();
    });
  };
}

export async function startGitHttpServer(
  options: GitHttpOptions & { port: number; host?: string },
): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer(createGitHttpHandler(options));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeIdleConnections();
      }),
  };
}

/** The token from `Authorization: Bearer <t>` or the password of HTTP Basic (user name ignored). */
function tokenFrom(header: string | undefined): string | null {
  const m = /^(basic|bearer)\s+(\S+)\s*$/i.exec(header ?? "");
  if (!m?.[2]) return null;
  if (m[1]?.toLowerCase() === "bearer") return m[2];
  const decoded = Buffer.from(m[2], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon >= 0 && colon < decoded.length - 1 ? decoded.slice(colon + 1) : null;
}

async function isBareRepo(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory() && (await stat(join(dir, "HEAD"))).isFile();
  } catch {
    return false;
  }
}

/** Passes bytes through until more than `maxBytes` went by, then fails the pipeline (and says so once). */
function byteLimit(maxBytes: number, onExceeded: () => void): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen <= maxBytes) return done(null, chunk);
      onExceeded();
      done(new Error(`request body over ${maxBytes} bytes`));
    },
  });
}

/** pkt-line: four hex digits giving the length including themselves, then the payload. */
function pktLine(payload: string): string {
  return (Buffer.byteLength(payload) + 4).toString(16).padStart(4, "0") + payload;
}

function killOnClientGone(res: ServerResponse, child: ChildProcess): void {
  res.on("close", () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
}

/** Resolves once git has exited (or failed to start); keeps the last few KB of stderr for the log. */
function exited(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr = (stderr + c.toString("utf8")).slice(-4096);
  });
  child.stdin?.on("error", () => {}); // EPIPE when git exits before reading all input
  return new Promise((resolve) => {
    child.once("error", (err) => resolve({ code: null, stderr: String(err) }));
    child.once("close", (code) => resolve({ code, stderr }));
  });
}

function send(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-cache", ...headers });
  res.end(`${message}\n`);
}
