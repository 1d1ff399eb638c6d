import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalRepo, loadConfig, type RhumbatronConfig, sourceKeys } from "@rhumbatron/core";
import { createChange, importProject } from "@rhumbatron/db";
import { dumpAllRows, useTestDatabase } from "@rhumbatron/db/testing";
import { consumeQueue, enqueueCommand, withTransaction } from "@rhumbatron/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import { forksSweepTickFunction } from "../functions/forks-sweep.ts";
import { type TestWorld, testWorld } from "../test-world.ts";
import { captureLogs, testIdentity } from "../testing.ts";
import { cli, gitHttpServer } from "./git.testing.ts";
import { provisionHandler } from "./handlers.ts";

/**
 * Importing a repository (docs/repositories.md) through the real path: importProject
 * writes the row and project.provision, the integration queue delivers it to provisionHandler, which
 * reads the source with isomorphic-git into the canonical repository. Command-line git builds the
 * sources and is the independent oracle for what canonical holds.
 */
const t = useTestDatabase();
const TENANT = "ten_import";

const base = mkdtempSync(join(tmpdir(), "rh-import-src-"));

/** A working repository whose default branch is master: 3 commits, and a branch `feature` with one more. */
function masterRepo(): string {
  const dir = join(base, "shop");
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
  writeFileSync(join(dir, "run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
  cli(dir, "add", ".");
  cli(dir, "commit", "-q", "-m", "third");
  cli(dir, "checkout", "-q", "-b", "feature");
  writeFileSync(join(dir, "feature.txt"), "on the feature branch\n");
  cli(dir, "add", ".");
  cli(dir, "commit", "-q", "-m", "feature work");
  cli(dir, "checkout", "-q", "master");
  return dir;
}

let source = "";
let w: TestWorld;

beforeAll(async () => {
  source = masterRepo();
  w = await testWorld(t.db);
  await t.db.tenant.create({ data: { id: TENANT, slug: TENANT, name: TENANT } });
});

let n = 0;
/** Imports `from` as a new project and delivers its project.provision once; returns the project's ID and the delivery. */
async function importAndProvision(from: string, opts: { branch?: string; world?: TestWorld } = {}) {
  const world = opts.world ?? w;
  const { projectId } = await importProject(
    t.db,
    { tenantId: TENANT, name: `imported-${++n}`, from, branch: opts.branch ?? null },
    world.deps,
  );
  const run = await consumeQueue(t.db, "integration", [provisionHandler(world.deps)], { ...world.deps, owner: "t" });
  return { projectId, run };
}

const projectRow = (id: string) => t.db.project.findUniqueOrThrow({ where: { id } });

/** Everything in the namespace folder named after the project's canonical repository (a temporary included). */
const leftovers = (world: TestWorld, projectId: string) => {
  try {
    return readdirSync(world.root).filter((f) => f.startsWith(canonicalRepo(projectId)));
  } catch {
    return [];
  }
};

/** What canonical holds, read by command-line git from a clone of it. */
function cloneOfCanonical(world: TestWorld, projectId: string): string {
  const dir = mkdtempSync(join(tmpdir(), "rh-import-clone-"));
  cli(dir, "clone", "-q", world.store.gitdir(canonicalRepo(projectId)), "c");
  return join(dir, "c");
}

async function expectImported(projectId: string, branch: string) {
  const head = cli(source, "rev-parse", branch);
  const project = await projectRow(projectId);
  expect(project).toMatchObject({ status: "active", sourceKind: "import", failureReason: null });
  const canonical = w.store.gitdir(canonicalRepo(projectId));
  // main is the source's head itself: the same commit id, no commit of ours on top.
  expect(cli(canonical, "--git-dir", canonical, "rev-parse", "refs/heads/main")).toBe(head);
  const clone = cloneOfCanonical(w, projectId);
  expect(cli(clone, "log", "--format=%H %s")).toBe(cli(source, "log", "--format=%H %s", branch));
  // Nothing else was brought along: main alone, no remote-tracking refs, no hooks run or kept.
  expect(cli(canonical, "--git-dir", canonical, "for-each-ref", "--format=%(refname)")).toBe("refs/heads/main");
  const generations = await t.db.canonicalGeneration.findMany({ where: { projectId } });
  const tree = cli(source, "rev-parse", `${branch}^{tree}`);
  expect(generations).toMatchObject([{ generation: 0, commit: head, tree }]);
  // The code store holds the head's files, each blob under its id.
  const code = await w.blobs.get(sourceKeys.code(projectId, tree));
  const files = JSON.parse(new TextDecoder().decode(code?.body)) as Record<string, string>;
  const listed = Object.fromEntries(
    cli(source, "ls-tree", "-r", branch)
      .split("\n")
      .map((line) => {
        const [meta, path] = line.split("\t");
        return [path, meta?.split(" ")[2]];
      }),
  );
  expect(files).toEqual(listed);
  const cart = await w.blobs.get(sourceKeys.blob(projectId, listed["src/cart.js"] as string));
  expect(new TextDecoder().decode(cart?.body)).toBe("export const cart = [1];\n");
}

describe("importing a repository", () => {
  it("from a local path: canonical main is the source's master head, with its 3 commits, as generation 0", async () => {
    const { projectId, run } = await importAndProvision(source);
    expect(run.actions.ack).toBe(1);
    expect((await projectRow(projectId)).sourceUrl).toBe(source);
    await expectImported(projectId, "master");
    expect(cli(source, "rev-list", "--count", "master")).toBe("3");
  });

  it("a redelivered project.provision changes nothing: the same main, one generation, one project.created", async () => {
    const { projectId } = await importAndProvision(source);
    const canonical = w.store.gitdir(canonicalRepo(projectId));
    const before = cli(canonical, "--git-dir", canonical, "rev-parse", "refs/heads/main");
    await withTransaction(t.db, (ctx) =>
      enqueueCommand(
        ctx,
        { commandId: `cmd_provision_again_${projectId}`, commandType: "project.provision", projectId, payload: {} },
        w.deps,
      ),
    );
    const again = await consumeQueue(t.db, "integration", [provisionHandler(w.deps)], { ...w.deps, owner: "t" });
    expect(again.actions.ack).toBe(1);
    expect(cli(canonical, "--git-dir", canonical, "rev-parse", "refs/heads/main")).toBe(before);
    expect(await t.db.canonicalGeneration.count({ where: { projectId } })).toBe(1);
    expect(await t.db.outboxRow.count({ where: { projectId, eventType: "project.created" } })).toBe(1);
    await expectImported(projectId, "master");
  });

  it("from a file:// URL of a bare repository, the same", async () => {
    const bare = join(base, "shop-bare.git");
    cli(base, "clone", "-q", "--bare", source, bare);
    const { projectId } = await importAndProvision(`file://${bare}`);
    expect((await projectRow(projectId)).sourceUrl).toBe(`file://${bare}`);
    await expectImported(projectId, "master");
  });

  it("--branch picks another branch than the source's HEAD", async () => {
    const { projectId } = await importAndProvision(source, { branch: "feature" });
    expect((await projectRow(projectId)).sourceBranch).toBe("feature");
    await expectImported(projectId, "feature");
    expect(cli(cloneOfCanonical(w, projectId), "log", "-1", "--format=%s")).toBe("feature work");
  });

  it("runs nothing of the source: its hooks are not kept or run, a submodule stays the commit id its tree names", async () => {
    const dir = join(base, "with-hooks");
    mkdirSync(dir);
    cli(dir, "init", "-q", "-b", "trunk");
    const marker = join(base, "hook-ran");
    for (const hook of [
      "post-checkout",
      "post-merge",
      "post-receive",
      "pre-receive",
      "update",
      "reference-transaction",
    ]) {
      writeFileSync(join(dir, ".git", "hooks", hook), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    }
    writeFileSync(
      join(dir, ".gitmodules"),
      '[submodule "lib"]\n\tpath = lib\n\turl = https://example.invalid/lib.git\n',
    );
    writeFileSync(join(dir, ".gitattributes"), "*.txt filter=evil\n");
    writeFileSync(join(dir, "a.txt"), "plain\n");
    cli(dir, "add", ".");
    cli(dir, "update-index", "--add", "--cacheinfo", `160000,${"1".repeat(40)},lib`);
    cli(dir, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "with a submodule");
    const { projectId } = await importAndProvision(dir);
    const project = await projectRow(projectId);
    expect(project.status).toBe("active");
    const canonical = w.store.gitdir(canonicalRepo(projectId));
    expect(cli(canonical, "--git-dir", canonical, "rev-parse", "refs/heads/main")).toBe(cli(dir, "rev-parse", "trunk"));
    expect(cli(canonical, "--git-dir", canonical, "ls-tree", "main", "lib")).toBe(
      `160000 commit ${"1".repeat(40)}\tlib`,
    );
    expect(
      readdirSync(join(canonical, "hooks"), { recursive: true }).filter((f) => !String(f).endsWith(".sample")),
    ).toEqual([]);
    expect(existsSync(marker)).toBe(false);
  });

  it("over smart HTTP (git http-backend), the same", async () => {
    const server = await gitHttpServer(base);
    try {
      const bare = join(base, "served.git");
      cli(base, "clone", "-q", "--bare", source, bare);
      const { projectId } = await importAndProvision(`${server.url}/served.git`);
      expect((await projectRow(projectId)).sourceUrl).toBe(`${server.url}/served.git`);
      await expectImported(projectId, "master");
    } finally {
      await server.close();
    }
  });
});

describe("an import that cannot succeed fails the project with the reason and leaves nothing", () => {
  async function expectFailed(projectId: string, run: { actions: Record<string, number> }, reason: RegExp, world = w) {
    // Acked: the queue does not try again what will fail the same way.
    expect(run.actions).toMatchObject({ ack: 1, retry: 0, dead_letter: 0 });
    const project = await projectRow(projectId);
    expect(project.status).toBe("failed");
    expect(project.failureReason).toMatch(reason);
    expect(leftovers(world, projectId)).toEqual([]);
    expect(await t.db.canonicalGeneration.count({ where: { projectId } })).toBe(0);
    expect(await t.db.queueMessage.count({ where: { projectId } })).toBe(0);
  }

  it("an empty repository", async () => {
    const empty = join(base, "empty");
    mkdirSync(empty);
    cli(empty, "init", "-q", "-b", "master");
    const { projectId, run } = await importAndProvision(empty);
    await expectFailed(projectId, run, /empty repository/);
  });

  it("a branch the source does not have", async () => {
    const { projectId, run } = await importAndProvision(source, { branch: "nope" });
    await expectFailed(projectId, run, /has no branch nope \(it has feature, master\)/);
  });

  it("a path inside the server's own data (another project's canonical repository)", async () => {
    const { projectId: other } = await importAndProvision(source);
    const { projectId, run } = await importAndProvision(w.store.gitdir(canonicalRepo(other)));
    await expectFailed(projectId, run, /is inside this server's own data/);
    const viaLink = join(base, "link-to-data");
    symlinkSync(w.store.gitdir(canonicalRepo(other)), viaLink);
    const linked = await importAndProvision(viaLink);
    await expectFailed(linked.projectId, linked.run, /is inside this server's own data/);
  });

  it("a path that does not exist", async () => {
    const { projectId, run } = await importAndProvision(join(base, "missing"));
    await expectFailed(projectId, run, /does not exist/);
  });

  it("a repository with more files than source.importMaxFiles", async () => {
    const config = withSource({ importMaxFiles: 2 });
    const world = await testWorld(t.db, config);
    const { projectId, run } = await importAndProvision(source, { world });
    await expectFailed(projectId, run, /more than 2 files \(source\.importMaxFiles\)/, world);
  });

  it("a repository larger than source.importMaxBytes", async () => {
    const world = await testWorld(t.db, withSource({ importMaxBytes: 200 }));
    const { projectId, run } = await importAndProvision(source, { world });
    await expectFailed(projectId, run, /larger than 0 MB \(source\.importMaxBytes\)/, world);
  });

  it("over HTTP, a repository larger than source.importMaxBytes, stopped as the bytes arrive", async () => {
    const server = await gitHttpServer(base);
    try {
      const bare = join(base, "served-big.git");
      cli(base, "clone", "-q", "--bare", source, bare);
      const world = await testWorld(t.db, withSource({ importMaxBytes: 600 }));
      const { projectId, run } = await importAndProvision(`${server.url}/served-big.git`, { world });
      await expectFailed(projectId, run, /larger than 0 MB \(source\.importMaxBytes\)/, world);
    } finally {
      await server.close();
    }
  });

  it("a server that asks for credentials (HTTP 401), none given, fails at once saying to give them", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(401, { "www-authenticate": 'Basic realm="git"' });
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/private.git`;
      const { projectId, run } = await importAndProvision(url);
      await expectFailed(projectId, run, /asks for credentials \(HTTP 401\); import again with a user name/);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("a web server that is not a git server fails at once, without repeating what it answered", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("instance-secret: do-not-show\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/latest/meta-data`;
      const { projectId, run } = await importAndProvision(url);
      await expectFailed(projectId, run, /does not answer as a git server \(smart HTTP\)$/);
      expect((await projectRow(projectId)).failureReason).not.toContain("do-not-show");
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("a server that never answers fails the delivery after source.importIdleSeconds instead of holding the queue", async () => {
    const held = new Set<Socket>();
    const server = createServer(() => {}); // takes the request and says nothing
    server.on("connection", (socket) => held.add(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/silent.git`;
      const world = await testWorld(t.db, lastDelivery(withSource({ importIdleSeconds: 1 })));
      const { projectId, run } = await importAndProvision(url, { world });
      await expectFailed(projectId, run, /sent nothing for 1 s \(source\.importIdleSeconds\)/, world);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("an unreachable URL is retried by the queue, and its last delivery fails the project", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const url = `http://127.0.0.1:${port}/shop.git`;
    const first = await importAndProvision(url);
    expect(first.run.actions).toMatchObject({ ack: 0, retry: 1 });
    expect(await projectRow(first.projectId)).toMatchObject({ status: "provisioning", failureReason: null });
    expect(leftovers(w, first.projectId)).toEqual([]);
    // With no retries left, the delivery that fails is the last one: the project fails instead.
    const world = await testWorld(t.db, lastDelivery(loadConfig("dev")));
    const { projectId, run } = await importAndProvision(`http://127.0.0.1:${port}/other.git`, { world });
    await expectFailed(
      projectId,
      run,
      new RegExp(`could not read http://127\\.0\\.0\\.1:${port}/other\\.git after 1 attempts`),
      world,
    );
  });
});

describe("a failed import afterwards", () => {
  it("takes no Change, and the daily fork sweep passes it by", async () => {
    const { projectId } = await importAndProvision(join(base, "nowhere"));
    expect((await projectRow(projectId)).status).toBe("failed");
    const refused = createChange(
      t.db,
      {
        tenantId: TENANT,
        projectId,
        clientRequestId: "after-failure",
        createdBy: { kind: "user", id: "usr_test" },
        input: {
          title: "too late",
          riskTier: "low",
          description: "",
          goals: {},
          invariants: [],
          contractChanges: { added: [], removed: [], changed: [] },
          tasks: [
            {
              key: "a",
              title: "a",
              dependsOn: [],
              intents: { paths: ["a.txt"], prefixes: [] },
              editPlan: [{ op: "write", path: "a.txt", content: "a\n" }],
            },
          ],
        },
      },
      w.deps,
    );
    await expect(refused).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringMatching(/failed to provision \(.*does not exist.*\); changes cannot be added/),
    });
    const logs = captureLogs();
    await forksSweepTickFunction(w.config, w.deps.nudger).handler({
      db: t.db,
      config: w.config,
      logger: logs.logger,
      now: () => new Date(),
      key: "t",
      trigger: "manual",
      worker: testIdentity(),
    });
    const sweeps = await t.db.queueMessage.findMany({
      where: { commandType: "forks.sweep" },
      select: { projectId: true },
    });
    const active = await t.db.project.findMany({ where: { status: "active" }, select: { id: true } });
    expect(sweeps.map((s) => s.projectId).sort()).toEqual(active.map((p) => p.id).sort());
    expect(sweeps.map((s) => s.projectId)).not.toContain(projectId);
  });
});

/** The integration queue with no retries: the first delivery that fails is the last. */
function lastDelivery(config: RhumbatronConfig): RhumbatronConfig {
  const integration = { ...config.queues.policies.integration, maxRetries: 0 };
  return { ...config, queues: { ...config.queues, policies: { ...config.queues.policies, integration } } };
}

function withSource(source: Partial<RhumbatronConfig["source"]>): RhumbatronConfig {
  const config = loadConfig("dev");
  return { ...config, source: { ...config.source, ...source } };
}

describe("a private http(s) source with credentials given once (docs/repositories.md)", () => {
  const SECRET_KEY = "import-test-auth-secret";
  const basic = { username: "ada", password: `tok-${randomBytes(12).toString("hex")}` };
  const logged: string[] = [];
  const deps = () => ({
    ...w.deps,
    credentialSecret: SECRET_KEY,
    log: (fields: Record<string, unknown>, message: string) => logged.push(JSON.stringify({ fields, message })),
  });

  async function importPrivate(url: string, credentials: { username: string; password: string }) {
    const { projectId } = await importProject(
      t.db,
      { tenantId: TENANT, name: `private-${++n}`, from: url, branch: null, credentials },
      deps(),
    );
    // Sealed in its own row until provisioning ends, never in the project row.
    const row = await t.db.importCredential.findUniqueOrThrow({ where: { projectId } });
    expect(row.sealed).not.toContain(credentials.password);
    expect(JSON.stringify(await projectRow(projectId))).not.toContain(credentials.password);
    const run = await consumeQueue(t.db, "integration", [provisionHandler(deps())], { ...deps(), owner: "t" });
    return { projectId, run };
  }

  async function expectNowhere(secret: string) {
    const base64 = Buffer.from(`${basic.username}:${secret}`).toString("base64");
    const all = await dumpAllRows(t.db);
    expect(all.length).toBeGreaterThan(0);
    expect(all).not.toContain(secret);
    expect(all).not.toContain(base64);
    expect(logged.join("\n")).not.toContain(secret);
  }

  it("imports with the right credentials; the sealed row is gone and the secret is in no table or log", async () => {
    const root = mkdtempSync(join(tmpdir(), "rh-import-private-"));
    cli(root, "clone", "-q", "--bare", source, join(root, "private.git"));
    const server = await gitHttpServer(root, basic);
    try {
      const { projectId, run } = await importPrivate(`${server.url}/private.git`, basic);
      expect(run.actions).toMatchObject({ ack: 1 });
      await expectImported(projectId, "master");
      expect(await t.db.importCredential.count({ where: { projectId } })).toBe(0);
      await expectNowhere(basic.password);
    } finally {
      await server.close();
    }
  });

  it("wrong credentials fail the project with a reason that names no secret; the row is gone and the secret is nowhere", async () => {
    const root = mkdtempSync(join(tmpdir(), "rh-import-private-"));
    cli(root, "clone", "-q", "--bare", source, join(root, "private.git"));
    const server = await gitHttpServer(root, basic);
    const wrong = { username: "ada", password: `wrong-${randomBytes(12).toString("hex")}` };
    try {
      const { projectId, run } = await importPrivate(`${server.url}/private.git`, wrong);
      expect(run.actions).toMatchObject({ ack: 1, retry: 0, dead_letter: 0 });
      const project = await projectRow(projectId);
      expect(project.status).toBe("failed");
      expect(project.failureReason).toMatch(/refused the credentials given \(HTTP 401\); check the user name/);
      expect(project.failureReason).not.toContain(wrong.password);
      expect(await t.db.importCredential.count({ where: { projectId } })).toBe(0);
      await expectNowhere(wrong.password);
    } finally {
      await server.close();
    }
  });

  it("a sealed row this worker cannot open (another secret) fails the project saying so, and is deleted", async () => {
    const { projectId } = await importProject(
      t.db,
      { tenantId: TENANT, name: `private-${++n}`, from: "http://127.0.0.1:9/x.git", branch: null, credentials: basic },
      { ...deps(), credentialSecret: "another-secret" },
    );
    const run = await consumeQueue(t.db, "integration", [provisionHandler(deps())], { ...deps(), owner: "t" });
    expect(run.actions).toMatchObject({ ack: 1 });
    expect((await projectRow(projectId)).failureReason).toMatch(/cannot be opened by this worker/);
    expect(await t.db.importCredential.count({ where: { projectId } })).toBe(0);
  });
});
