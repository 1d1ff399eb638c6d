import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { isRepoName, loadConfig } from "@rhumbatron/core";
import type { Logger } from "../logger.ts";
import { handleForkPush, handlePush } from "./git-http-push.ts";
import {
  advertise,
  byteLimit,
  exited,
  type GitHttp,
  gitFailed,
  isBareRepo,
  killOnClientGone,
  type PushOptions,
  RESULT,
  type Route,
  send,
  tokenAccepted,
  tooLarge,
} from "./git-http-wire.ts";

export type { PushOptions, Route } from "./git-http-wire.ts";

/**
 * git smart-HTTP ("stateless-rpc") endpoint over the installation's bare repositories: a person or
 * a worker clones and fetches any of them with a short-lived read token.
 *
 *   GET  /git/<repo>.git/info/refs?service=git-upload-pack   ref advertisement
 *   POST /git/<repo>.git/git-upload-pack                     negotiation + packfile
 *
 * A fork (an Agent run's or a Candidate's, never a canonical repository) takes a push with a write
 * token for it (`authorizeWrite`), which may only move its refs/heads/main forward:
 *
 *   GET  /git/<fork>.git/info/refs?service=git-receive-pack   ref advertisement
 *   POST /git/<fork>.git/git-receive-pack                     ref update + packfile
 *
 * A project waiting for its push (docs/repositories.md, Pushing into an empty project) takes it on
 * its own route, with that project's one-time push token:
 *
 *   GET  /git/push/<projectId>.git/info/refs?service=git-receive-pack   an empty repository's refs
 *   POST /git/push/<projectId>.git/git-receive-pack                     the push, into a quarantine
 *
 * Each request is checked on its own: the protocol is stateless, so the token is verified on
 * info/refs and again on every POST.
 */
export interface GitHttpOptions {
  /** `<dataDir>/git/rhumbatron-projects-<env>`; bare repositories, named as packages/core/src/source/names.ts builds them. */
  repoRoot: string;
  /** Throws DomainError("FORBIDDEN") when `token` may not read `repo`. */
  authorize: (repo: string, token: string | null) => Promise<void>;
  gitBinary?: string;
  logger?: Pick<Logger, "info" | "warn"> & Partial<Pick<Logger, "debug">>;
  /** The largest upload-pack or fork push body read, after gzip (413 beyond it); default `source.gitRequestMaxBytes`. */
  maxRequestBytes?: number;
  /** Pushes into projects waiting for one; without it every push on that route is refused (403). */
  push?: PushOptions;
  /**
   * Throws DomainError("FORBIDDEN") unless `token` is a live write token for the fork `repo`;
   * without it no fork takes a push (403).
   */
  authorizeWrite?: (repo: string, token: string | null) => Promise<void>;
  /** Other services on the same port: a request whose path starts with a route's prefix is its handler's. */
  routes?: Route[];
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

// The repo segment is matched literally (no percent-decoding): valid names are [a-z0-9_-] only.
const ROUTE = /^\/git\/([^/]+)\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;
const PUSH_ROUTE = /^\/git\/push\/(proj_[0-9a-f-]{36})\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;

export function createGitHttpHandler({
  repoRoot,
  authorize,
  gitBinary = "git",
  logger,
  maxRequestBytes = loadConfig().source.gitRequestMaxBytes,
  push,
  authorizeWrite,
  routes,
}: GitHttpOptions): Handler {
  const h: GitHttp = {
    repoRoot,
    authorize,
    logger,
    maxRequestBytes,
    push,
    authorizeWrite,
    routes,
    git: (args) =>
      // No shell, and only PATH: nothing from the worker's environment (tokens, GIT_* overrides) reaches git.
      spawn(gitBinary, args, {
        // Cast: Next's types (the web app imports the worker) make NODE_ENV a required variable.
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } as unknown as NodeJS.ProcessEnv,
        stdio: ["pipe", "pipe", "pipe"],
      }),
  };
  return (req, res) => {
    const started = Date.now();
    res.on("finish", () => {
      const path = req.url?.split("?")[0] ?? "";
      const line = { method: req.method, path, status: res.statusCode, ms: Date.now() - started };
      // A mounted route's calls (the other workers' source calls) come by the hundred: debug, unless refused.
      const routine = routes?.some((r) => path.startsWith(r.prefix)) && res.statusCode < 400;
      if (routine) logger?.debug?.(line, "git http");
      else logger?.info(line, "git http");
    });
    handle(h, req, res).catch((err: unknown) => {
      logger?.warn({ err }, "git http request failed");
      if (!res.headersSent) send(res, 500, "internal error");
      else res.destroy();
    });
  };
}

async function handle(h: GitHttp, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // A mounted route reads its own URL: matched on the path as sent, before the checks of git's routes.
  const path = (req.url ?? "/").split("?")[0] ?? "/";
  const mounted = h.routes?.find((r) => path.startsWith(r.prefix));
  if (mounted) return mounted.handle(req, res);
  // A NUL, a backslash or an encoded dot or slash never belongs to a route; refused before anything is read.
  const raw = req.url ?? "/";
  if (raw.includes("\u0000") || raw.includes("\\") || /%(00|2e|2f|5c)/i.test(raw)) return send(res, 404, "not found");
  const url = new URL(raw, "http://localhost");
  const pushRoute = PUSH_ROUTE.exec(url.pathname);
  if (pushRoute)
    return handlePush(h, req, res, pushRoute[1] ?? "", pushRoute[2] ?? "", url.searchParams.get("service"));
  const m = ROUTE.exec(url.pathname);
  if (!m) return send(res, 404, "not found");
  const [, repo = "", route] = m;
  const service = url.searchParams.get("service");
  if (route === "git-receive-pack" || (route === "info/refs" && service === "git-receive-pack")) {
    return handleForkPush(h, req, res, repo, route);
  }
  const isRefs = route === "info/refs" && req.method === "GET" && service === "git-upload-pack";
  const isPack = route === "git-upload-pack" && req.method === "POST";
  if (!isRefs && !isPack) return send(res, 404, "not found");

  // isRepoName admits only [a-z0-9_-], so the joined path cannot leave h.repoRoot.
  const dir = join(h.repoRoot, repo);
  if (!isRepoName(repo) || !(await isBareRepo(dir))) return send(res, 404, "repository not found");

  if (!(await tokenAccepted(req, res, "read", (token) => h.authorize(repo, token)))) return;
  if (isRefs) return advertise(h, res, repo, dir);
  return uploadPack(h, req, res, repo, dir);
}

async function uploadPack(
  h: GitHttp,
  req: IncomingMessage,
  res: ServerResponse,
  repo: string,
  dir: string,
): Promise<void> {
  const encoding = (req.headers["content-encoding"] ?? "identity").toLowerCase();
  if (!["identity", "gzip", "x-gzip"].includes(encoding)) return send(res, 415, "unsupported content encoding");
  if (Number(req.headers["content-length"]) > h.maxRequestBytes) return tooLarge(h, req, res);
  const child = h.git(["upload-pack", "--strict", "--stateless-rpc", dir]);
  killOnClientGone(res, child);
  const stdin = child.stdin as NodeJS.WritableStream;
  const body: Readable = encoding === "identity" ? req : req.pipe(createGunzip());
  // Counted after gzip, so a small compressed body cannot unpack into an unbounded one.
  let overLimit = false;
  const limit = byteLimit(h.maxRequestBytes, () => {
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
  if (overLimit && !res.headersSent) return tooLarge(h, req, res);
  if (res.headersSent) {
    // Whatever git wrote (possibly an ERR pkt-line) is the client's to read.
    res.end();
    if (code !== 0) h.logger?.warn({ repo, code, stderr }, "git upload-pack failed mid-response");
    return;
  }
  if (code !== 0) return gitFailed(h, res, repo, code, stderr);
  res.writeHead(200, { "Content-Type": RESULT, "Cache-Control": "no-cache" }).end();
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
