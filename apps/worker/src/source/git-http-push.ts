import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { isDomainError, loadConfig } from "@rhumbatron/core";
import {
  advertise,
  byteLimit,
  exited,
  type GitHttp,
  gitFailed,
  killOnClientGone,
  NO_HOOKS,
  PUSH_RESULT,
  type PushOptions,
  send,
  tokenFrom,
  tooLarge,
} from "./git-http-wire.ts";

// A push into a project waiting for one (git-http.ts, the push route): received into a quarantine, then handed over.

export async function handlePush(
  h: GitHttp,
  req: IncomingMessage,
  res: ServerResponse,
  projectId: string,
  route: string,
  service: string | null,
): Promise<void> {
  const isRefs = route === "info/refs" && req.method === "GET" && service === "git-receive-pack";
  const isPack = route === "git-receive-pack" && req.method === "POST";
  if (!isRefs && !isPack) return send(res, 404, "not found");
  if (!h.push) return send(res, 403, "push is not offered");
  const token = tokenFrom(req.headers.authorization);
  if (!token) return send(res, 401, "a push token is required", { "WWW-Authenticate": 'Basic realm="rhumbatron"' });
  try {
    await h.push.authorize(projectId, token);
  } catch (err) {
    if (isDomainError(err) && (err.code === "FORBIDDEN" || err.code === "NOT_FOUND"))
      return send(res, 403, err.message);
    throw err;
  }
  await mkdir(h.push.quarantineRoot, { recursive: true });
  if (isRefs) {
    // A waiting project has no refs: the advertisement of a new empty repository, made and dropped here.
    const empty = await mkdtemp(join(h.push.quarantineRoot, "advertise-"));
    try {
      if (!(await initBare(h, empty))) return send(res, 500, "git failed");
      return await advertise(h, res, projectId, empty, "receive-pack");
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  }
  const quarantine = join(h.push.quarantineRoot, `${projectId}-${randomUUID()}.git`);
  let kept = false;
  try {
    if (!(await initBare(h, quarantine))) return send(res, 500, "git failed");
    kept = await receivePack(h, req, res, projectId, token, quarantine, h.push);
  } finally {
    if (!kept) await rm(quarantine, { recursive: true, force: true });
  }
}

/** A new bare repository with no hooks and no template files; false when git failed. */
async function initBare(h: GitHttp, dir: string): Promise<boolean> {
  const child = h.git([...NO_HOOKS, "init", "--bare", "--quiet", "--template=", dir]);
  child.stdin?.end();
  const { code, stderr } = await exited(child);
  if (code !== 0) h.logger?.warn({ dir, code, stderr }, "git init failed");
  return code === 0;
}

/**
 * Receives the push into `quarantine`, then hands it over with `accept`. git's answer is held until
 * then, so a push that loses (another won, the token went stale) is answered 403, not "ok".
 * Returns true when the quarantine was handed over (and must be kept).
 */
async function receivePack(
  h: GitHttp,
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
    tooLarge(h, req, res, max);
    return false;
  }
  const child = h.git([
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
    tooLarge(h, req, res, max);
    return false;
  }
  if (code !== 0) {
    gitFailed(h, res, projectId, code, stderr, "receive-pack");
    return false;
  }
  const answer = () =>
    res.writeHead(200, { "Content-Type": PUSH_RESULT, "Cache-Control": "no-cache" }).end(Buffer.concat(out));
  // A request that updated no ref (git's probe before a large push, a push git refused to unpack): nothing to take.
  if (!(await hasRefs(h, quarantine))) {
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
  h.logger?.info({ projectId }, "push received; provisioning");
  answer();
  return true;
}

/** Whether the repository holds any ref (a file under refs/ or a packed ref). */
async function hasRefs(h: GitHttp, dir: string): Promise<boolean> {
  const child = h.git(["--git-dir", dir, "for-each-ref", "--count=1", "--format=%(refname)"]);
  child.stdin?.end();
  let out = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  const { code } = await exited(child);
  return code === 0 && out.trim() !== "";
}
