import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { canonicalRepo, isDomainError, isRepoName, loadConfig } from "@rhumbatron/core";
import {
  advertise,
  exited,
  type GitHttp,
  isBareRepo,
  isNullOid,
  NO_HOOKS,
  PUSH_RESULT,
  type PushHead,
  type PushOptions,
  receivePack,
  send,
  tokenAccepted,
  tokenFrom,
} from "./git-http-wire.ts";

// Pushes (git receive-pack): into a fork with a write token for it, moving its main forward only;
// and into a project waiting for one (the push route), received into a quarantine, then handed over.

// The server's own rules for a fork, whatever the client asks: main only moves forward, nothing is
// deleted, and no gc is left running behind the request.
const FORK_RECEIVE = [
  "-c",
  "receive.denyNonFastForwards=true",
  "-c",
  "receive.denyDeletes=true",
  "-c",
  "receive.autogc=false",
];
const MAIN = "refs/heads/main";

/** Whether `repo` names a fork (an Agent run's or a Candidate's): the only repositories pushed to. */
export function isFork(repo: string): boolean {
  if (!isRepoName(repo)) return false;
  try {
    return canonicalRepo(repo) !== repo;
  } catch {
    return true; // not a Project ID, so a fork's name
  }
}

/** Why a fork refuses these ref updates, or null: only an existing refs/heads/main moves, and only forward. */
export function forkRefusal(head: PushHead): string | null {
  for (const u of head.updates) {
    if (u.ref !== MAIN) return `only ${MAIN} may be pushed to a fork, not ${u.ref}`;
    if (isNullOid(u.newOid)) return `${MAIN} may not be deleted`;
    if (isNullOid(u.oldOid)) return `${MAIN} is only moved forward, never created`;
  }
  return null;
}

/**
 * GET info/refs?service=git-receive-pack and POST git-receive-pack on /git/<repo>.git: a push into
 * a fork, with a write token for exactly that fork. A canonical repository never takes one: its
 * main moves only when a Candidate is promoted.
 */
export async function handleForkPush(
  h: GitHttp,
  req: IncomingMessage,
  res: ServerResponse,
  repo: string,
  route: string,
): Promise<void> {
  const authorizeWrite = h.authorizeWrite;
  if (!authorizeWrite) return send(res, 403, "push is not offered");
  const isRefs = route === "info/refs" && req.method === "GET";
  const isPack = route === "git-receive-pack" && req.method === "POST";
  if (!isRefs && !isPack) return send(res, 404, "not found");
  if (!isRepoName(repo)) return send(res, 404, "repository not found");
  if (!isFork(repo))
    return send(res, 403, "a project's canonical repository takes no push: main moves only by promotion");
  // isRepoName admits only [a-z0-9_-], so the joined path cannot leave h.repoRoot.
  const dir = join(h.repoRoot, repo);
  if (!(await isBareRepo(dir))) return send(res, 404, "repository not found");
  if (!(await tokenAccepted(req, res, "write", (token) => authorizeWrite(repo, token)))) return;
  if (isRefs) return advertise(h, res, repo, dir, "receive-pack");
  // git's ref lock settles two pushes at once: the later one is told "ng" in the report, never half an answer.
  const out = await receivePack(h, req, res, {
    repo,
    dir,
    maxBytes: h.maxRequestBytes,
    config: FORK_RECEIVE,
    refuse: forkRefusal,
  });
  if (out) res.writeHead(200, { "Content-Type": PUSH_RESULT, "Cache-Control": "no-cache" }).end(out);
}

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
    kept = await receiveInto(h, req, res, projectId, token, quarantine, h.push);
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
async function receiveInto(
  h: GitHttp,
  req: IncomingMessage,
  res: ServerResponse,
  projectId: string,
  token: string,
  quarantine: string,
  options: PushOptions,
): Promise<boolean> {
  const maxBytes = options.maxRequestBytes ?? loadConfig().source.pushMaxBytes;
  const out = await receivePack(h, req, res, { repo: projectId, dir: quarantine, maxBytes });
  if (!out) return false;
  const answer = () => res.writeHead(200, { "Content-Type": PUSH_RESULT, "Cache-Control": "no-cache" }).end(out);
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
