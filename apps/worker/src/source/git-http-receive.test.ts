import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { candidateFork, canonicalRepo, loadConfig, type RepoMode, workspaceFork } from "@rhumbatron/core";
import { checkRepoToken, issueRepoToken, revokeRepoToken } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import iso from "isomorphic-git";
import http from "isomorphic-git/http/node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createGitHttpHandler, type GitHttpOptions } from "./git-http.ts";
import { pktLine } from "./git-http-wire.ts";

/**
 * Pushes to forks over the git endpoint: real repositories, real tokens checked by checkRepoToken,
 * command-line git and isomorphic-git as clients, and command-line git on the bare repositories
 * as the oracle for what a push changed.
 */
const t = useTestDatabase();
const config = loadConfig("dev");
const CANON = canonicalRepo("proj_0f8fad5b-d9cb-469f-a165-70867728950e");
const WS = workspaceFork("run_1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed");
const CAND = candidateFork("cand_9f3a1c2b7d");
const MAIN = "refs/heads/main";

let tmp: string;
let repoRoot: string;
let gitEnv: NodeJS.ProcessEnv;
const servers: Server[] = [];
let base: string;
const answered: { method: string; path: string; status: number }[] = [];

/** The system git CLI with a fresh HOME, no system config and no prompts; never throws. */
function git(args: string[], cwd = tmp): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("git", args, { cwd, env: gitEnv }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) || 1 : 0, stdout, stderr }),
    );
  });
}

async function ok(args: string[], cwd = tmp): Promise<string> {
  const r = await git(args, cwd);
  if (r.code !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** Every ref of a bare repository with its commit: what a refused push must leave as it was. */
const refsOf = (repo: string) =>
  ok(["--git-dir", join(repoRoot, repo), "for-each-ref", "--format=%(objectname) %(refname)"]);
const mainOf = (repo: string) => ok(["--git-dir", join(repoRoot, repo), "rev-parse", MAIN]);

async function token(repo: string, mode: RepoMode, now = new Date()): Promise<string> {
  return (await issueRepoToken(t.db, { repo, mode, purpose: "test" }, config, now)).token;
}

const url = (repo: string, tok: string | null, at = base) =>
  `http://${tok === null ? "" : `x:${tok}@`}${at.slice(7)}/git/${repo}.git`;

let works = 0;
/** A clone of the fork as it is now (from disk) with one new commit on main. */
async function workOn(repo: string): Promise<{ dir: string; commit: string; before: string }> {
  const dir = join(tmp, `work-${++works}`);
  await ok(["clone", "-q", join(repoRoot, repo), dir]);
  await writeFile(join(dir, `file-${works}.txt`), `change ${works}\n`);
  await ok(["add", "."], dir);
  await ok(["commit", "-q", "-m", `change ${works}`], dir);
  return { dir, commit: await ok(["rev-parse", "HEAD"], dir), before: await ok(["rev-parse", "HEAD~1"], dir) };
}

async function serve(options: Partial<GitHttpOptions>): Promise<string> {
  const handler = createGitHttpHandler({
    repoRoot,
    authorize: (repo, tok) => checkRepoToken(t.db, tok, repo, "read", new Date()),
    ...options,
  });
  const server = createServer((req, res) => {
    res.on("finish", () => answered.push({ method: req.method ?? "", path: req.url ?? "", status: res.statusCode }));
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const authorizeWrite = (repo: string, tok: string | null) => checkRepoToken(t.db, tok, repo, "write", new Date());

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "git-http-receive-"));
  repoRoot = join(tmp, "git", "rhumbatron-projects-test");
  await mkdir(join(tmp, "home"), { recursive: true });
  await mkdir(repoRoot, { recursive: true });
  gitEnv = {
    PATH: process.env.PATH,
    HOME: join(tmp, "home"),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: "Test",
    GIT_AUTHOR_EMAIL: "test@example.com",
    GIT_COMMITTER_NAME: "Test",
    GIT_COMMITTER_EMAIL: "test@example.com",
  };
  const work = join(tmp, "seed");
  await ok(["init", "-q", "-b", "main", work]);
  await writeFile(join(work, "README.md"), "# hello\n");
  await ok(["add", "."], work);
  await ok(["commit", "-q", "-m", "first"], work);
  // Forks start as copies of canonical, as the worker makes them.
  await ok(["clone", "-q", "--bare", work, join(repoRoot, CANON)]);
  for (const fork of [WS, CAND]) await ok(["clone", "-q", "--bare", join(repoRoot, CANON), join(repoRoot, fork)]);
  base = await serve({ authorizeWrite });
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

beforeEach(() => {
  answered.length = 0;
});

describe("pushing to a fork with a write token", () => {
  it("takes a command-line push of a new commit on main", async () => {
    const { dir, commit, before } = await workOn(WS);
    expect(await mainOf(WS)).toBe(before);
    const r = await git(["push", "-q", url(WS, await token(WS, "write")), `HEAD:${MAIN}`], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(await mainOf(WS)).toBe(commit);
    expect(await ok(["--git-dir", join(repoRoot, WS), "show", `${MAIN}:file-${works}.txt`])).toBe(`change ${works}`);
    await ok(["--git-dir", join(repoRoot, WS), "fsck", "--strict"]);
    expect(answered.some((a) => a.method === "POST" && a.status === 200)).toBe(true);
  });

  it("takes a push from isomorphic-git, as workers make them", async () => {
    const tok = await token(CAND, "write");
    const onAuth = () => ({ username: "x", password: tok });
    const dir = join(tmp, "iso");
    await iso.clone({ fs, http, dir, url: `${base}/git/${CAND}.git`, ref: "main", singleBranch: true, onAuth });
    await writeFile(join(dir, "iso.txt"), "from isomorphic-git\n");
    await iso.add({ fs, dir, filepath: "iso.txt" });
    const author = { name: "Worker", email: "worker@example.com" };
    const oid = await iso.commit({ fs, dir, message: "from a worker", author });
    const result = await iso.push({ fs, http, dir, remote: "origin", ref: "main", onAuth });
    expect(result.ok).toBe(true);
    expect(result.refs[MAIN]?.ok).toBe(true);
    expect(await mainOf(CAND)).toBe(oid);
    expect(await ok(["--git-dir", join(repoRoot, CAND), "show", `${MAIN}:iso.txt`])).toBe("from isomorphic-git");
  });

  const expired = () => new Date(Date.now() - (config.source.repoTokenTtlSeconds + 60) * 1000);
  it.each([
    ["a read token", () => token(WS, "read"), `the token is read-only for ${WS}`],
    ["a write token for another fork", () => token(CAND, "write"), `the token is for ${CAND}, not ${WS}`],
    ["an expired write token", () => token(WS, "write", expired()), "the repository token has expired"],
    [
      "a revoked write token",
      async () => {
        const tok = await token(WS, "write");
        await revokeRepoToken(t.db, tok, new Date());
        return tok;
      },
      "the repository token was revoked",
    ],
  ])("refuses %s with 403 and leaves the fork as it was", async (_label, makeToken, message) => {
    const tok = await makeToken();
    const { dir } = await workOn(WS);
    const refs = await refsOf(WS);
    const r = await git(["push", url(WS, tok), `HEAD:${MAIN}`], dir);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("403");
    expect(await refsOf(WS)).toBe(refs);
    expect(answered.map((a) => a.status)).not.toContain(200);

    // The same answer on the advertisement and on every POST, whoever the client.
    const headers = { authorization: `Bearer ${tok}` };
    const refsAnswer = await fetch(`${url(WS, null)}/info/refs?service=git-receive-pack`, { headers });
    expect([refsAnswer.status, await refsAnswer.text()]).toEqual([403, `${message}\n`]);
    const post = await fetch(`${url(WS, null)}/git-receive-pack`, { method: "POST", body: "0000", headers });
    expect([post.status, await post.text()]).toEqual([403, `${message}\n`]);
    expect(await refsOf(WS)).toBe(refs);
  });

  it("answers a push without a token with 401 and the Basic challenge", async () => {
    const { dir } = await workOn(WS);
    const refs = await refsOf(WS);
    const r = await git(["push", url(WS, null), `HEAD:${MAIN}`], dir);
    expect(r.code).not.toBe(0);
    expect(answered.map((a) => a.status)).toContain(401);
    expect(answered.map((a) => a.status)).not.toContain(200);
    const res = await fetch(`${url(WS, null)}/info/refs?service=git-receive-pack`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Basic realm="rhumbatron"');
    expect(await res.text()).toBe("a write token is required\n");
    expect(await refsOf(WS)).toBe(refs);
  });

  it("never takes a push to a canonical repository, even with a write token for it", async () => {
    const tok = await token(CANON, "write");
    const { dir } = await workOn(CANON);
    const refs = await refsOf(CANON);
    const r = await git(["push", url(CANON, tok), `HEAD:${MAIN}`], dir);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("403");
    expect(await refsOf(CANON)).toBe(refs);
    const res = await fetch(`${url(CANON, null)}/info/refs?service=git-receive-pack`, {
      headers: { authorization: `Bearer ${tok}` },
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toBe("a project's canonical repository takes no push: main moves only by promotion\n");
    // The write token still reads it: only the push is refused.
    const read = await fetch(`${url(CANON, null)}/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Bearer ${tok}` },
    });
    expect(read.status).toBe(200);
  });

  const only = (ref: string) => `only ${MAIN} may be pushed to a fork, not ${ref}`;
  // The fork's main rewritten: its last commit replaced, so the pushed commit does not descend from it.
  const rewrite = [
    ["reset", "-q", "--hard", "HEAD~1"],
    ["commit", "-q", "--amend", "-m", "rewritten"],
  ];
  it.each([
    ["a non-fast-forward (--force)", rewrite, ["--force", `HEAD:${MAIN}`], "non-fast-forward"],
    ["another branch", [], ["HEAD:refs/heads/other"], only("refs/heads/other")],
    ["a tag", [["tag", "v1"]], ["refs/tags/v1"], only("refs/tags/v1")],
    ["a deleted main", [], [`:${MAIN}`], `${MAIN} may not be deleted`],
    ["main and another branch at once", [], [`HEAD:${MAIN}`, "HEAD:refs/heads/other"], only("refs/heads/other")],
  ])("refuses %s, saying why, and the fork's refs stay as they were", async (_label, prepare, refspecs, reason) => {
    const { dir } = await workOn(WS);
    for (const args of prepare) await ok(args, dir);
    const refs = await refsOf(WS);
    const r = await git(["push", url(WS, await token(WS, "write")), ...refspecs], dir);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("[remote rejected]");
    expect(r.stderr).toContain(reason);
    expect(await refsOf(WS)).toBe(refs);
    expect(answered.map((a) => a.status)).not.toContain(500);
  });
});

/** The objects of `commit` that `base` lacks, as a packfile (what a client sends after its commands). */
function packOf(dir: string, commit: string, baseCommit: string): Promise<Buffer<ArrayBuffer>> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["pack-objects", "--stdout", "--revs", "-q"], { cwd: dir, env: gitEnv });
    const out: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`pack-objects ${code}`))));
    child.stdin.end(`${commit}\n^${baseCommit}\n`);
  });
}

const request = (old: string, next: string, ref: string, capabilities: string, pack = Buffer.alloc(0)) =>
  Buffer.concat([Buffer.from(`${pktLine(`${old} ${next} ${ref}\u0000${capabilities}\n`)}0000`), pack]);

function post(
  repo: string,
  tok: string,
  body: Uint8Array<ArrayBuffer>,
  headers: Record<string, string> = {},
  at = base,
) {
  return fetch(`${url(repo, null, at)}/git-receive-pack`, {
    method: "POST",
    body,
    headers: { authorization: `Bearer ${tok}`, "content-type": "application/x-git-receive-pack-request", ...headers },
  });
}

describe("the receive-pack requests themselves", () => {
  it("takes a gzip-encoded push, and answers git's report", async () => {
    const { dir, commit, before } = await workOn(CAND);
    const body = gzipSync(request(before, commit, MAIN, "report-status agent=test", await packOf(dir, commit, before)));
    const res = await post(CAND, await token(CAND, "write"), body, { "content-encoding": "gzip" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-git-receive-pack-result");
    const report = await res.text();
    expect(report).toContain("unpack ok\n");
    expect(report).toContain(`ok ${MAIN}\n`);
    expect(await mainOf(CAND)).toBe(commit);
  });

  it("answers 403 with the reason to a refused update from a client that asked for no report", async () => {
    const { dir, commit, before } = await workOn(CAND);
    const body = request(before, commit, "refs/heads/other", "agent=test", await packOf(dir, commit, before));
    const refs = await refsOf(CAND);
    const res = await post(CAND, await token(CAND, "write"), body);
    expect([res.status, await res.text()]).toEqual([
      403,
      `only ${MAIN} may be pushed to a fork, not refs/heads/other\n`,
    ]);
    const bad = await post(CAND, await token(CAND, "write"), Buffer.from(`${pktLine("hello\n")}0000`));
    expect([bad.status, await bad.text()]).toEqual([400, "malformed push request\n"]);
    expect(await refsOf(CAND)).toBe(refs);
  });

  it("settles two pushes to one fork at once: one moves main, the other is told so in git's report", async () => {
    const tok = await token(WS, "write");
    for (let round = 0; round < 3; round++) {
      const a = await workOn(WS);
      const b = await workOn(WS);
      expect(a.before).toBe(b.before);
      const bodies = await Promise.all(
        [a, b].map(async (w) =>
          request(w.before, w.commit, MAIN, "report-status", await packOf(w.dir, w.commit, w.before)),
        ),
      );
      const answers = await Promise.all(bodies.map((body) => post(WS, tok, body)));
      expect(answers.map((r) => r.status)).toEqual([200, 200]);
      const reports = await Promise.all(answers.map((r) => r.text()));
      const won = reports.map((r) => r.includes(`ok ${MAIN}\n`));
      expect(won.filter(Boolean)).toHaveLength(1);
      expect(reports.filter((r) => r.includes(`ng ${MAIN} `))).toHaveLength(1);
      expect(await mainOf(WS)).toBe(won[0] ? a.commit : b.commit);
    }
    await ok(["--git-dir", join(repoRoot, WS), "fsck", "--strict"]);
  });

  it("answers 413 to a push over the limit, and the fork stays as it was", async () => {
    const limited = await serve({ authorizeWrite, maxRequestBytes: 64 * 1024 });
    const { dir } = await workOn(CAND);
    await writeFile(join(dir, "big.bin"), randomBytes(256 * 1024));
    await ok(["add", "."], dir);
    await ok(["commit", "-q", "-m", "big"], dir);
    const refs = await refsOf(CAND);
    const r = await git(["push", url(CAND, await token(CAND, "write"), limited), `HEAD:${MAIN}`], dir);
    expect(r.code).not.toBe(0);
    expect(answered.map((a) => a.status)).toContain(413);
    expect(await refsOf(CAND)).toBe(refs);
  });

  it("offers no push at all without authorizeWrite", async () => {
    const closed = await serve({});
    const tok = await token(WS, "write");
    const { dir } = await workOn(WS);
    const refs = await refsOf(WS);
    const r = await git(["push", url(WS, tok, closed), `HEAD:${MAIN}`], dir);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("403");
    const res = await fetch(`${url(WS, null, closed)}/info/refs?service=git-receive-pack`, {
      headers: { authorization: `Bearer ${tok}` },
    });
    expect([res.status, await res.text()]).toEqual([403, "push is not offered\n"]);
    expect(await refsOf(WS)).toBe(refs);
  });
});
