import { type ChildProcess, spawn } from "node:child_process";
import { stat } from "node:fs/promises";
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
 * Push (git-receive-pack) is never offered. Each request is checked on its own: the protocol is
 * stateless, so the token is verified on info/refs and again on every upload-pack POST.
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
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

// The repo segment is matched literally (no percent-decoding): valid names are [a-z0-9_-] only.
const ROUTE = /^\/git\/([^/]+)\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;
const ADVERTISEMENT = "application/x-git-upload-pack-advertisement";
const RESULT = "application/x-git-upload-pack-result";

export function createGitHttpHandler({
  repoRoot,
  authorize,
  gitBinary = "git",
  logger,
  maxRequestBytes = loadConfig().source.gitRequestMaxBytes,
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

  async function advertise(res: ServerResponse, repo: string, dir: string): Promise<void> {
    // Buffered (ref lists are small) so a git failure can still become a clean 500.
    const child = git(["upload-pack", "--strict", "--stateless-rpc", "--advertise-refs", dir]);
    killOnClientGone(res, child);
    child.stdin?.end();
    const chunks: Buffer[] = [];
    child.stdout?.on("data", (c: Buffer) => chunks.push(c));
    const { code, stderr } = await exited(child);
    if (code !== 0) return gitFailed(res, repo, code, stderr);
    // Smart-HTTP framing: the service announcement pkt-line and a flush precede git's own output.
    res.writeHead(200, { "Content-Type": ADVERTISEMENT, "Cache-Control": "no-cache" });
    res.end(Buffer.concat([Buffer.from(`${pktLine("# service=git-upload-pack\n")}0000`), ...chunks]));
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

  function tooLarge(req: IncomingMessage, res: ServerResponse): void {
    // Unread bytes stay unread: the connection closes after the answer instead of draining them.
    res.setHeader("Connection", "close");
    send(res, 413, `the request body is larger than ${maxRequestBytes} bytes`);
    req.resume();
  }

  function gitFailed(res: ServerResponse, repo: string, code: number | null, stderr: string): void {
    // stderr names server paths: it goes to the log, never to the client.
    logger?.warn({ repo, code, stderr }, "git upload-pack failed");
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
