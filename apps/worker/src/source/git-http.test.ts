import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { DomainError } from "@rhumbatron/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createGitHttpHandler, type GitHttpOptions, startGitHttpServer } from "./git-http.ts";

type Logger = NonNullable<GitHttpOptions["logger"]>;

const REPO = "proj_0f8fad5b-d9cb-469f-a165-70867728950e";
const BROKEN = "proj_11111111-2222-4333-8444-555555555555"; // has a HEAD file but is no repository
const TOKENS: Record<string, string> = { [REPO]: "tok-read-1", [BROKEN]: "tok-read-2" };

let tmp: string;
let repoRoot: string;
let gitEnv: NodeJS.ProcessEnv;
let server: Server;
let base: string;
const answered: { method: string; path: string; status: number }[] = [];

async function authorize(repo: string, token: string | null): Promise<void> {
  if (!token || TOKENS[repo] !== token) throw new DomainError("FORBIDDEN", "read token refused");
}

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

const url = (token: string | null, repo = REPO) =>
  `http://${token === null ? "" : `x:${token}@`}${base.slice(7)}/git/${repo}.git`;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "git-http-"));
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
  const work = join(tmp, "work");
  await ok(["init", "-q", "-b", "main", work]);
  await writeFile(join(work, "README.md"), "# hello\n");
  await mkdir(join(work, "src"));
  await writeFile(join(work, "src", "main.ts"), "export const x = 1;\n");
  await ok(["add", "."], work);
  await ok(["commit", "-q", "-m", "first"], work);
  await ok(["clone", "-q", "--bare", work, join(repoRoot, REPO)]);
  await mkdir(join(repoRoot, BROKEN));
  await writeFile(join(repoRoot, BROKEN, "HEAD"), "garbage\n");

  const handler = createGitHttpHandler({ repoRoot, authorize });
  server = createServer((req, res) => {
    res.on("finish", () => answered.push({ method: req.method ?? "", path: req.url ?? "", status: res.statusCode }));
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

beforeEach(() => {
  answered.length = 0;
});

describe("git smart-HTTP endpoint", () => {
  it("clones with a token, and fetch brings a later commit", async () => {
    const clone = join(tmp, "clone-ok");
    await ok(["clone", "-q", url(TOKENS[REPO] ?? ""), clone]);
    expect(await readFile(join(clone, "README.md"), "utf8")).toBe("# hello\n");
    expect(await readFile(join(clone, "src", "main.ts"), "utf8")).toBe("export const x = 1;\n");
    expect(answered.some((a) => a.method === "POST" && a.status === 200)).toBe(true);

    // A new commit lands in the canonical bare repository.
    const work = join(tmp, "work");
    await writeFile(join(work, "CHANGELOG.md"), "- second\n");
    await ok(["add", "."], work);
    await ok(["commit", "-q", "-m", "second"], work);
    await ok(["push", "-q", join(repoRoot, REPO), "main"], work);
    const head = await ok(["rev-parse", "HEAD"], work);

    answered.length = 0;
    await ok(["fetch", "-q", "origin"], clone);
    expect(await ok(["rev-parse", "origin/main"], clone)).toBe(head);
    expect(await ok(["show", "origin/main:CHANGELOG.md"], clone)).toBe("- second");
    // git first asks without credentials (answered by the 401 challenge), then sends the token.
    expect(answered.filter((a) => a.status !== 401).map((a) => a.status)).toEqual(
      answered.filter((a) => a.status !== 401).map(() => 200),
    );
    expect(answered.filter((a) => a.method === "POST").length).toBeGreaterThan(0);
  });

  it("refuses a clone without a token with 401 and a Basic challenge", async () => {
    const r = await git(["clone", "-q", url(null), join(tmp, "clone-anon")]);
    expect(r.code).not.toBe(0);
    expect(answered.map((a) => a.status)).toContain(401);
    expect(answered.some((a) => a.status === 200)).toBe(false);

    const res = await fetch(`${url(null)}/info/refs?service=git-upload-pack`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Basic realm="rhumbatron"');
  });

  it("refuses a wrong token with 403 and the refusal message", async () => {
    const r = await git(["clone", "-q", url("not-the-token"), join(tmp, "clone-wrong")]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("403");
    expect(answered.map((a) => a.status)).toContain(403);
    expect(answered.some((a) => a.status === 200)).toBe(false);

    // A token for another repository does not open this one either.
    const res = await fetch(`${url(null)}/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Basic ${Buffer.from(`x:${TOKENS[BROKEN]}`).toString("base64")}` },
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toBe("read token refused\n");
  });

  it("checks the token on upload-pack POSTs too", async () => {
    const res = await fetch(`${url(null)}/git-upload-pack`, { method: "POST", body: "0000" });
    expect(res.status).toBe(401);
    const wrong = await fetch(`${url(null)}/git-upload-pack`, {
      method: "POST",
      body: "0000",
      headers: { authorization: "Bearer nope" },
    });
    expect(wrong.status).toBe(403);
  });

  it("never accepts a push, and the bare repository stays unchanged", async () => {
    const before = await ok(["--git-dir", join(repoRoot, REPO), "rev-parse", "main"]);
    const clone = join(tmp, "clone-push");
    await ok(["clone", "-q", url(TOKENS[REPO] ?? ""), clone]);
    await writeFile(join(clone, "evil.txt"), "nope\n");
    await ok(["add", "."], clone);
    await ok(["commit", "-q", "-m", "push attempt"], clone);

    const r = await git(["push", "origin", "main"], clone);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("403");
    expect(await ok(["--git-dir", join(repoRoot, REPO), "rev-parse", "main"])).toBe(before);

    const res = await fetch(`${url(null)}/git-receive-pack`, { method: "POST", body: "0000" });
    expect(res.status).toBe(403);
    expect(await res.text()).toBe("push is not offered\n");

    // The push route (docs/repositories.md, Pushing into an empty project) is refused by a server
    // given no push
    // options, and serves nothing but receive-pack.
    const pushRoute = `${base}/git/push/${REPO}.git`;
    const refused = await fetch(`${pushRoute}/info/refs?service=git-receive-pack`, {
      headers: { authorization: "Bearer x" },
    });
    expect(refused.status).toBe(403);
    const fetchOnPush = await fetch(`${pushRoute}/info/refs?service=git-upload-pack`, {
      headers: { authorization: "Bearer x" },
    });
    expect(fetchOnPush.status).toBe(404);
    const notAnId = await fetch(`${base}/git/push/..%2f${REPO}.git/git-receive-pack`, { method: "POST", body: "0000" });
    expect(notAnId.status).toBe(404);
  });

  it("serves the advertisement and a gzip-encoded negotiation with the smart-HTTP framing", async () => {
    const auth = { authorization: `Bearer ${TOKENS[REPO]}` };
    const refs = await fetch(`${url(null)}/info/refs?service=git-upload-pack`, { headers: auth });
    expect(refs.status).toBe(200);
    expect(refs.headers.get("content-type")).toBe("application/x-git-upload-pack-advertisement");
    expect(refs.headers.get("cache-control")).toBe("no-cache");
    const text = await refs.text();
    expect(text.startsWith("001e# service=git-upload-pack\n0000")).toBe(true);
    const head = await ok(["--git-dir", join(repoRoot, REPO), "rev-parse", "main"]);
    expect(text).toContain(`${head} refs/heads/main`);

    // want <sha> / flush / done, gzip-compressed as git sends larger requests.
    const body = gzipSync(Buffer.from(`0032want ${head}\n00000009done\n`));
    const pack = await fetch(`${url(null)}/git-upload-pack`, {
      method: "POST",
      body,
      headers: { ...auth, "content-type": "application/x-git-upload-pack-request", "content-encoding": "gzip" },
    });
    expect(pack.status).toBe(200);
    expect(pack.headers.get("content-type")).toBe("application/x-git-upload-pack-result");
    const bytes = Buffer.from(await pack.arrayBuffer());
    expect(bytes.subarray(0, 8).toString()).toBe("0008NAK\n");
    expect(bytes.subarray(8, 12).toString()).toBe("PACK");
  });

  it.each([
    ["a path-traversal name", "/git/..%2F..%2Fetc.git/info/refs?service=git-upload-pack"],
    ["an unknown project", "/git/proj_99999999-9999-4999-8999-999999999999.git/info/refs?service=git-upload-pack"],
    ["a name the system never builds", "/git/home.git/info/refs?service=git-upload-pack"],
    ["the dumb protocol", `/git/${REPO}.git/info/refs`],
    ["another path", `/git/${REPO}.git/HEAD`],
    ["an encoded NUL", `/git/${REPO}%00.git/info/refs?service=git-upload-pack`],
    ["an encoded dot segment", `/git/%2e%2e/${REPO}.git/info/refs?service=git-upload-pack`],
    ["an encoded backslash", `/git/..%5C${REPO}.git/info/refs?service=git-upload-pack`],
    ["an upper-case name", `/git/${REPO.toUpperCase()}.git/info/refs?service=git-upload-pack`],
  ])("answers 404 to %s", async (_label, path) => {
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${TOKENS[REPO]}` } });
    expect(res.status).toBe(404);
  });

  it("answers a git failure with a 500 that names no server path", async () => {
    const res = await fetch(`${url(null, BROKEN)}/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Bearer ${TOKENS[BROKEN]}` },
    });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain(tmp);
    expect(text).not.toContain(BROKEN);
  });
});

describe("the request body limit", () => {
  const LIMIT = 4096;
  let limited: { port: number; close(): Promise<void> };
  let head = "";
  beforeAll(async () => {
    limited = await startGitHttpServer({ port: 0, repoRoot, authorize, maxRequestBytes: LIMIT });
    head = await ok(["--git-dir", join(repoRoot, REPO), "rev-parse", "main"]);
  });
  afterAll(() => limited?.close());

  const packUrl = () => `http://127.0.0.1:${limited.port}/git/${REPO}.git/git-upload-pack`;
  const auth = () => ({
    authorization: `Bearer ${TOKENS[REPO]}`,
    "content-type": "application/x-git-upload-pack-request",
  });
  /** `lines` want lines and no flush: git keeps reading until the body ends, so only the limit stops it. */
  const wants = (lines: number) => Buffer.from(`0032want ${head}\n`.repeat(lines));

  it("serves a clone whose negotiation fits", async () => {
    const clone = join(tmp, "clone-limited");
    await ok(["clone", "-q", `http://x:${TOKENS[REPO]}@127.0.0.1:${limited.port}/git/${REPO}.git`, clone]);
    expect(await readFile(join(clone, "README.md"), "utf8")).toBe("# hello\n");
  });

  it("answers 413 to a declared length over the limit", async () => {
    const res = await fetch(packUrl(), { method: "POST", body: wants(200), headers: auth() });
    expect(res.status).toBe(413);
    expect(await res.text()).toBe(`the request body is larger than ${LIMIT} bytes\n`);
  });

  it("counts a chunked body without a length, and a gzip body after it is unpacked", async () => {
    const body = wants(200);
    const chunked = await fetch(packUrl(), {
      method: "POST",
      headers: auth(),
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < body.length; i += 512) controller.enqueue(body.subarray(i, i + 512));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);

    const bomb = gzipSync(wants(20_000)); // a few KB that unpack to about 1 MB
    expect(bomb.length).toBeLessThan(LIMIT);
    const gzipped = await fetch(packUrl(), {
      method: "POST",
      body: bomb,
      headers: { ...auth(), "content-encoding": "gzip" },
    });
    expect(gzipped.status).toBe(413);
  });
});

describe("startGitHttpServer", () => {
  it("listens on an ephemeral port, serves clones, and closes", async () => {
    const srv = await startGitHttpServer({ port: 0, host: "127.0.0.1", repoRoot, authorize });
    expect(srv.port).toBeGreaterThan(0);
    const clone = join(tmp, "clone-started");
    await ok(["clone", "-q", `http://x:${TOKENS[REPO]}@127.0.0.1:${srv.port}/git/${REPO}.git`, clone]);
    expect(await readFile(join(clone, "README.md"), "utf8")).toBe("# hello\n");
    await srv.close();
    await expect(fetch(`http://127.0.0.1:${srv.port}/git/x.git/info/refs`)).rejects.toThrow();
  });
});

describe("mounted routes", () => {
  it("sends a request under a route's prefix to its handler, and answers a throwing one 500", async () => {
    const warned: unknown[] = [];
    const logger = { info: () => {}, warn: (obj: unknown) => warned.push(obj) } as unknown as Logger;
    const srv = await startGitHttpServer({
      port: 0,
      repoRoot,
      authorize,
      logger,
      routes: [
        {
          prefix: "/rpc/",
          handle: async (req, res) => {
            res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ path: req.url }));
          },
        },
        {
          prefix: "/broken/",
          handle: async () => {
            throw new Error("the route broke");
          },
        },
      ],
    });
    try {
      const at = `http://127.0.0.1:${srv.port}`;
      const rpc = await fetch(`${at}/rpc/source.read?x=a%2Fb`, { method: "POST", body: "{}" });
      expect([rpc.status, await rpc.json()]).toEqual([200, { path: "/rpc/source.read?x=a%2Fb" }]);
      const broken = await fetch(`${at}/broken/x`);
      expect([broken.status, await broken.text()]).toEqual([500, "internal error\n"]);
      expect(warned).toEqual([
        expect.objectContaining({ err: expect.objectContaining({ message: "the route broke" }) }),
      ]);
      // Outside every prefix, the git routes answer as before.
      expect((await fetch(`${at}/rpc`)).status).toBe(404);
      const refs = await fetch(`${at}/git/${REPO}.git/info/refs?service=git-upload-pack`, {
        headers: { authorization: `Bearer ${TOKENS[REPO]}` },
      });
      expect(refs.status).toBe(200);
    } finally {
      await srv.close();
    }
  });
});
