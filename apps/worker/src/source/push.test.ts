import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalRepo, DomainError, loadConfig, type RhumbatronConfig } from "@rhumbatron/core";
import {
  acceptPush,
  checkPushToken,
  checkRepoToken,
  createProjectForPush,
  issueRepoToken,
  reissuePushToken,
} from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { consumeQueue } from "@rhumbatron/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { provisionedProject, type TestWorld, testWorld } from "../test-world.ts";
import { startGitHttpServer } from "./git-http.ts";
import { provisionHandler } from "./handlers.ts";

/**
 * Pushing into an empty project (docs/repositories.md, Pushing into an empty project) through the real path:
 * createProjectForPush, command-line `git push` to the worker's git endpoint, project.provision on
 * the integration queue. Command-line git builds the pushed repository and is the oracle for what
 * canonical holds; it also clones canonical back over the same endpoint.
 */
const t = useTestDatabase();
const TENANT = "ten_push";
const ADMIN = "usr_push_admin";

const gitEnv = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: mkdtempSync(join(tmpdir(), "rh-push-home-")),
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_TERMINAL_PROMPT: "0",
  GIT_AUTHOR_DATE: "2026-01-02T03:04:05Z",
  GIT_COMMITTER_DATE: "2026-01-02T03:04:05Z",
};

function cli(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Ada", "-c", "user.email=ada@example.com", ...args], {
    cwd,
    encoding: "utf8",
    env: gitEnv,
  }).trim();
}

/** Command-line git as a process of its own (a push waits on our server, in this same process); never throws. */
function run(cwd: string, ...args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("git", args, { cwd, env: gitEnv, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8");
    });
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

const base = mkdtempSync(join(tmpdir(), "rh-push-src-"));
let repos = 0;

/** A working repository on master: 3 commits, and a branch `feature` with one more. */
function masterRepo(): string {
  const dir = join(base, `shop-${++repos}`);
  mkdirSync(dir);
  cli(dir, "init", "-q", "-b", "master");
  writeFileSync(join(dir, "README.md"), "# Shop\n");
  cli(dir, "add", ".");
  cli(dir, "commit", "-q", "-m", "first");
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src", "cart.js"), "export const cart = [];\n");
  cli(dir, "add", ".");
  cli(dir, "commit", "-q", "-m", "second");
  writeFileSync(join(dir, "src", "cart.js"), "export const cart = [1];\n");
  cli(dir, "add", ".");
  cli(dir, "commit", "-q", "-m", "third");
  cli(dir, "checkout", "-q", "-b", "feature");
  writeFileSync(join(dir, "feature.txt"), "on the feature branch\n");
  cli(dir, "add", ".");
  cli(dir, "commit", "-q", "-m", "feature work");
  cli(dir, "checkout", "-q", "master");
  return dir;
}

let w: TestWorld;
let source = "";
let quarantineRoot = "";
let gitBase = "";
let close: () => Promise<void> = async () => {};

beforeAll(async () => {
  source = masterRepo();
  w = await testWorld(t.db);
  await t.db.tenant.create({ data: { id: TENANT, slug: TENANT, name: TENANT } });
  quarantineRoot = join(w.dir, "git", "push-quarantine-test");
  const server = await startGitHttpServer({
    port: 0,
    repoRoot: w.root,
    authorize: (repo, token) => checkRepoToken(t.db, token, repo, "read", new Date()),
    push: {
      quarantineRoot,
      authorize: (projectId, token) => checkPushToken(t.db, projectId, token, new Date()),
      accept: (projectId, token, quarantine) => acceptPush(t.db, { projectId, token, quarantine }, w.deps),
    },
  });
  gitBase = `127.0.0.1:${server.port}/git`;
  close = server.close;
});

afterAll(() => close());

let names = 0;
const waiting = () =>
  createProjectForPush(t.db, { tenantId: TENANT, name: `pushed-${++names}`, actorId: ADMIN }, w.deps);
const pushUrl = (projectId: string, token: string | null) =>
  `http://${token === null ? "" : `x:${token}@`}${gitBase}/push/${projectId}.git`;
const projectRow = (id: string) => t.db.project.findUniqueOrThrow({ where: { id } });
/** Delivers what the integration queue holds (the project.provision a push sent). */
const provision = (world: TestWorld = w) =>
  consumeQueue(t.db, "integration", [provisionHandler(world.deps)], { ...world.deps, owner: "t" });
const provisionCommands = (projectId: string) =>
  t.db.queueMessage.count({ where: { projectId, commandType: "project.provision" } });
/** The quarantine folder's entries: a push handed over or refused leaves none once provisioning ran. */
const quarantined = () => (existsSync(quarantineRoot) ? readdirSync(quarantineRoot) : []);
const canonicalExists = (projectId: string) => existsSync(w.store.gitdir(canonicalRepo(projectId)));

function withSource(source: Partial<RhumbatronConfig["source"]>): RhumbatronConfig {
  const c = loadConfig("dev");
  return { ...c, source: { ...c.source, ...source } };
}

describe("pushing into an empty project", () => {
  it("a push of master (and feature) becomes generation 0: master's head as it is, its whole history", async () => {
    const { projectId, token, expiresAt } = await waiting();
    expect(token).toMatch(/^rpt_/);
    expect(expiresAt.getTime()).toBeGreaterThan(Date.now());
    expect(await projectRow(projectId)).toMatchObject({ status: "awaiting_push", sourceKind: "push" });
    // Only the hash is kept.
    const row = await t.db.pushToken.findUniqueOrThrow({ where: { projectId } });
    expect(JSON.stringify(row)).not.toContain(token);

    const pushed = await run(source, "push", pushUrl(projectId, token), "master", "feature");
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(await projectRow(projectId)).toMatchObject({ status: "provisioning" });
    const r = await provision();
    expect(r.actions.ack).toBe(1);

    expect(await projectRow(projectId)).toMatchObject({ status: "active", sourceKind: "push", failureReason: null });
    const head = cli(source, "rev-parse", "master");
    const canonical = w.store.gitdir(canonicalRepo(projectId));
    expect(cli(canonical, "--git-dir", canonical, "rev-parse", "refs/heads/main")).toBe(head);
    expect(cli(canonical, "--git-dir", canonical, "for-each-ref", "--format=%(refname)")).toBe("refs/heads/main");
    const generations = await t.db.canonicalGeneration.findMany({ where: { projectId } });
    expect(generations).toMatchObject([
      { generation: 0, commit: head, tree: cli(source, "rev-parse", "master^{tree}") },
    ]);
    expect(quarantined()).toEqual([]);

    // Upload-pack still serves the canonical source: a clone over HTTP holds master's history exactly.
    const read = await issueRepoToken(
      t.db,
      { repo: canonicalRepo(projectId), mode: "read", purpose: "test" },
      w.config,
      new Date(),
    );
    const clones = mkdtempSync(join(tmpdir(), "rh-push-clone-"));
    const cloned = await run(
      clones,
      "clone",
      "-q",
      `http://x:${read.token}@${gitBase}/${canonicalRepo(projectId)}.git`,
      "c",
    );
    expect(cloned.code, cloned.stderr).toBe(0);
    expect(cli(join(clones, "c"), "log", "--format=%H %s")).toBe(cli(source, "log", "--format=%H %s", "master"));

    // The token is spent: the same push again is refused and changes nothing.
    writeFileSync(join(source, "late.txt"), "late\n");
    const again = await run(source, "push", pushUrl(projectId, token), "HEAD:refs/heads/main");
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/403/);
    expect(cli(canonical, "--git-dir", canonical, "rev-parse", "refs/heads/main")).toBe(head);
    // Acked commands leave the queue: a second one would still be there.
    expect(await provisionCommands(projectId)).toBe(0);
    expect(quarantined()).toEqual([]);
  });

  it("a wrong token, no token, or a token replaced by a new one is refused and nothing changes", async () => {
    const { projectId, token } = await waiting();
    const wrong = await run(source, "push", pushUrl(projectId, `${token}x`), "master");
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/403/);
    // No credentials: the 401 asks for them and git, unable to prompt, gives up.
    const none = await run(source, "push", pushUrl(projectId, null), "master");
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/could not read Username|Authentication failed/);

    const bare = await fetch(`http://${gitBase}/push/${projectId}.git/info/refs?service=git-receive-pack`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get("www-authenticate")).toBe('Basic realm="rhumbatron"');
    const advertised = await fetch(`http://${gitBase}/push/${projectId}.git/info/refs?service=git-receive-pack`, {
      headers: { authorization: `Basic ${Buffer.from(`x:${token}`).toString("base64")}` },
    });
    expect(advertised.status).toBe(200);
    expect(advertised.headers.get("content-type")).toBe("application/x-git-receive-pack-advertisement");
    expect((await advertised.text()).startsWith("001f# service=git-receive-pack\n0000")).toBe(true);

    const fresh = await reissuePushToken(t.db, { tenantId: TENANT, projectId, actorId: ADMIN }, w.deps);
    const old = await run(source, "push", pushUrl(projectId, token), "master");
    expect(old.code).not.toBe(0);
    expect(await projectRow(projectId)).toMatchObject({ status: "awaiting_push" });
    expect(await provisionCommands(projectId)).toBe(0);
    expect(quarantined()).toEqual([]);

    // An expired token is refused too.
    await t.db.pushToken.update({ where: { projectId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const expired = await run(source, "push", pushUrl(projectId, fresh.token), "master");
    expect(expired.code).not.toBe(0);
    expect(expired.stderr).toMatch(/403/);
    expect(await projectRow(projectId)).toMatchObject({ status: "awaiting_push" });
    expect(quarantined()).toEqual([]);
  });

  it("an active project takes no push and no new push token", async () => {
    const projectId = await provisionedProject(w, TENANT);
    const before = cli(w.store.gitdir(canonicalRepo(projectId)), "rev-parse", "refs/heads/main");
    const refused = await run(source, "push", pushUrl(projectId, "rpt_guessed"), "master");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/403/);
    await expect(reissuePushToken(t.db, { tenantId: TENANT, projectId, actorId: ADMIN }, w.deps)).rejects.toThrow(
      DomainError,
    );
    expect(cli(w.store.gitdir(canonicalRepo(projectId)), "rev-parse", "refs/heads/main")).toBe(before);
    expect(quarantined()).toEqual([]);
  });

  it("of two pushes at once with the same token, exactly one is taken", async () => {
    const { projectId, token } = await waiting();
    const other = masterRepo();
    const [a, b] = await Promise.all([
      run(source, "push", pushUrl(projectId, token), "master"),
      run(other, "push", pushUrl(projectId, token), "master"),
    ]);
    expect([a.code, b.code].filter((c) => c === 0)).toHaveLength(1);
    expect(await provisionCommands(projectId)).toBe(1);
    await provision();
    const winner = a.code === 0 ? source : other;
    const canonical = w.store.gitdir(canonicalRepo(projectId));
    expect(cli(canonical, "--git-dir", canonical, "rev-parse", "refs/heads/main")).toBe(
      cli(winner, "rev-parse", "master"),
    );
    expect(quarantined()).toEqual([]);
  });

  it("a push that holds no branch (a tag only) fails the project saying so; nothing is left", async () => {
    const { projectId, token } = await waiting();
    cli(source, "tag", "-f", "v1");
    const pushed = await run(source, "push", pushUrl(projectId, token), "refs/tags/v1");
    expect(pushed.code, pushed.stderr).toBe(0);
    await provision();
    expect(await projectRow(projectId)).toMatchObject({ status: "failed" });
    expect((await projectRow(projectId)).failureReason).toMatch(/the push holds no branch/);
    expect(canonicalExists(projectId)).toBe(false);
    expect(await t.db.canonicalGeneration.count({ where: { projectId } })).toBe(0);
    expect(quarantined()).toEqual([]);
  });

  it("a push of several branches, none main or master, fails the project naming them", async () => {
    const { projectId, token } = await waiting();
    const pushed = await run(source, "push", pushUrl(projectId, token), "master:refs/heads/dev", "feature");
    expect(pushed.code, pushed.stderr).toBe(0);
    await provision();
    expect((await projectRow(projectId)).failureReason).toMatch(
      /several branches \(dev, feature\) and neither main nor master/,
    );
    expect(canonicalExists(projectId)).toBe(false);
    expect(quarantined()).toEqual([]);
  });

  it("a push over source.importMaxBytes fails the project with the limit; nothing is left", async () => {
    const small = await testWorld(t.db, withSource({ importMaxBytes: 200 }));
    const { projectId, token } = await waiting();
    const pushed = await run(source, "push", pushUrl(projectId, token), "master");
    expect(pushed.code, pushed.stderr).toBe(0);
    await provision(small);
    expect(await projectRow(projectId)).toMatchObject({ status: "failed" });
    expect((await projectRow(projectId)).failureReason).toMatch(/larger than 0 MB \(source\.importMaxBytes\)/);
    expect(existsSync(small.store.gitdir(canonicalRepo(projectId)))).toBe(false);
    expect(quarantined()).toEqual([]);
  });
});
