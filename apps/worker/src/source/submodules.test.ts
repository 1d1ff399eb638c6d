import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { candidateFork, canonicalRepo } from "@rhumbatron/core";
import { getCandidate, importProject, withRepoToken } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { consumeQueue } from "@rhumbatron/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import { candidateFor, type TestWorld, testWorld, verificationDeps } from "../test-world.ts";
import { drainVerifications } from "../verification/runner.ts";
import { cli, gitHttpServer } from "./git.testing.ts";
import { provisionHandler } from "./handlers.ts";
import { parseGitmodules, submoduleSource } from "./submodules.ts";

/**
 * Submodules an admin allows at import (docs/repositories.md, Submodules), through the real path:
 * importProject, project.provision on the integration queue, isomorphic-git reading the sources.
 * Command-line git builds the repositories (a superproject with a submodule that has its own) and
 * is the oracle: `git clone --recurse-submodules` of the source holds exactly the files a
 * verification checkout of canonical holds.
 */
const t = useTestDatabase();
/** The tenant test-world.ts makes Changes in. */
const TENANT = "ten_a";
const base = mkdtempSync(join(tmpdir(), "rh-submodules-"));
/** Command-line git that may read local submodules (git refuses file transport for them by default). */
const git = (cwd: string, ...args: string[]) => cli(cwd, "-c", "protocol.file.allow=always", ...args);

/** A repository at `base/<name>` with `files`, then each submodule added from its URL; one commit. */
function repo(name: string, files: Record<string, string>, subs: { path: string; url: string }[] = []): string {
  const dir = join(base, name);
  mkdirSync(dir);
  git(dir, "init", "-q", "-b", "main");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text, { mode: path.endsWith(".sh") ? 0o755 : 0o644 });
  }
  git(dir, "add", ".");
  for (const s of subs) git(dir, "submodule", "add", "-q", s.url, s.path);
  git(dir, "commit", "-q", "-m", `${name} as it is`);
  return dir;
}

/** Every file under `dir` but git's own: its content, a symlink's target, whether it is executable. */
function filesUnder(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string) => {
    for (const e of readdirSync(at)) {
      if (e === ".git") continue;
      const path = join(at, e);
      const s = lstatSync(path);
      const rel = relative(dir, path);
      if (s.isSymbolicLink()) out[rel] = `-> ${readlinkSync(path)}`;
      else if (s.isDirectory()) walk(path);
      else out[rel] = `${s.mode & 0o100 ? "x " : ""}${readFileSync(path, "utf8")}`;
    }
  };
  walk(dir);
  return out;
}

let superproject = "";
let w: TestWorld;

beforeAll(async () => {
  repo("inner", { "inner.txt": "the innermost\n" });
  const lib = repo("lib", { "lib.sh": "#!/bin/sh\necho lib says hello\n", "README.md": "# lib\n" }, [
    { path: "deps/inner", url: "../inner" },
  ]);
  // A symlink inside a submodule stays a symlink.
  symlinkSync("lib.sh", join(lib, "run"));
  git(lib, "add", "run");
  git(lib, "commit", "-q", "-m", "a link");
  superproject = repo(
    "super",
    {
      "app.txt": "the app\n",
      ".rhumbatron/checks.yml": [
        "version: 1",
        "checks:",
        "  - id: lib",
        "    about: reads the submodules' files, which only a recursive checkout has",
        "    run: [cat, deps.txt, vendor/lib/run, vendor/lib/deps/inner/inner.txt]",
        "    timeout: 60",
        "",
      ].join("\n"),
      "deps.txt": "deps\n",
    },
    [{ path: "vendor/lib", url: "../lib" }],
  );
  w = await testWorld(t.db);
  await t.db.tenant.upsert({ where: { id: TENANT }, create: { id: TENANT, slug: TENANT, name: TENANT }, update: {} });
});

let n = 0;
async function importAndProvision(from: string, submodules: boolean) {
  const { projectId } = await importProject(
    t.db,
    { tenantId: TENANT, name: `sub-${++n}`, from, branch: null, submodules },
    w.deps,
  );
  const run = await consumeQueue(t.db, "integration", [provisionHandler(w.deps)], { ...w.deps, owner: "t" });
  return { projectId, run, project: await t.db.project.findUniqueOrThrow({ where: { id: projectId } }) };
}

const refsOf = (projectId: string) => {
  const canonical = w.store.gitdir(canonicalRepo(projectId));
  return cli(canonical, "--git-dir", canonical, "for-each-ref", "--format=%(refname)").split("\n").sort();
};

/** A checkout of canonical's main as verification makes it: files, then the submodules it holds. */
async function verificationCheckout(projectId: string) {
  const dir = mkdtempSync(join(tmpdir(), "rh-submodules-checkout-"));
  const repo = canonicalRepo(projectId);
  await withRepoToken(w.db, { repo, mode: "read", purpose: "test" }, w.config, w.deps.now, (token) =>
    w.store.checkout(repo, token, dir),
  );
  return { dir, ...(await w.store.materializeSubmodules(dir)) };
}

/** The source as a recursive clone has it. */
function recursiveClone(from: string): string {
  const dir = mkdtempSync(join(tmpdir(), "rh-submodules-oracle-"));
  git(dir, "clone", "-q", "--recurse-submodules", from, "c");
  return join(dir, "c");
}

const commitOf = (dir: string, path: string) => cli(dir, "rev-parse", `HEAD:${path}`);

describe("an import that allows submodules", () => {
  it("from a local path: keeps each submodule's commit (one inside another) and a checkout holds what a recursive clone holds", async () => {
    const { projectId, project, run } = await importAndProvision(superproject, true);
    expect(run.actions.ack).toBe(1);
    expect(project).toMatchObject({ status: "active", sourceSubmodules: true, failureReason: null });
    const lib = commitOf(superproject, "vendor/lib");
    const inner = commitOf(join(base, "lib"), "deps/inner");
    expect(refsOf(projectId)).toEqual(["refs/heads/main", `refs/submodules/${lib}`, `refs/submodules/${inner}`].sort());
    const oracle = recursiveClone(superproject);
    const checkout = await verificationCheckout(projectId);
    expect(checkout.missing).toEqual([]);
    expect(checkout.written).toEqual([
      { path: "vendor/lib", commit: lib },
      { path: "vendor/lib/deps/inner", commit: inner },
    ]);
    expect(filesUnder(checkout.dir)).toEqual(filesUnder(oracle));
    expect(filesUnder(checkout.dir)).toMatchObject({
      "vendor/lib/lib.sh": "x #!/bin/sh\necho lib says hello\n",
      "vendor/lib/run": "-> lib.sh",
      "vendor/lib/deps/inner/inner.txt": "the innermost\n",
    });
  });

  it("over smart HTTP, a relative URL read against the superproject's: the same", async () => {
    const served = mkdtempSync(join(tmpdir(), "rh-submodules-served-"));
    for (const name of ["super", "lib", "inner"]) cli(served, "clone", "-q", "--bare", join(base, name), name);
    const server = await gitHttpServer(served);
    try {
      const { projectId, project } = await importAndProvision(`${server.url}/super`, true);
      expect(project).toMatchObject({ status: "active", failureReason: null });
      expect(refsOf(projectId)).toHaveLength(3);
      const checkout = await verificationCheckout(projectId);
      expect(checkout.missing).toEqual([]);
      expect(filesUnder(checkout.dir)).toEqual(filesUnder(recursiveClone(superproject)));
    } finally {
      await server.close();
    }
  });

  it("verification runs the checks on the submodules' files; the composed tree keeps the gitlink as it was", async () => {
    const { projectId } = await importAndProvision(superproject, true);
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "note",
      tasks: [{ key: "a", editPlan: [{ op: "write", path: "NOTES.md", content: "a note\n" }] }],
    });
    const done = await drainVerifications(verificationDeps(w));
    expect(done[0]).toMatchObject({ candidateId, outcome: "verified" });
    const view = await getCandidate(t.db, { tenantId: TENANT, candidateId }, w.config);
    const check = view.evidence.find((e) => e.checkId === "lib");
    expect(check).toMatchObject({ status: "pass" });
    const log = new TextDecoder().decode((await w.blobs.get(check?.outputKey ?? ""))?.body);
    expect(log).toContain("lib says hello");
    expect(log).toContain("the innermost");
    const row = await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } });
    const composed = row.composedCommit ?? "";
    // The gitlink is the one the base names: nothing of the submodule was added to the superproject.
    const gitdir = w.store.gitdir(candidateFork(candidateId));
    expect(cli(gitdir, "--git-dir", gitdir, "ls-tree", composed, "vendor/lib")).toBe(
      `160000 commit ${commitOf(superproject, "vendor/lib")}\tvendor/lib`,
    );
    expect(cli(gitdir, "--git-dir", gitdir, "ls-tree", "-r", "--name-only", composed)).not.toContain("lib.sh");
  });
});

describe("submodules, not allowed or not readable", () => {
  it("by default nothing of a submodule is fetched, and a checkout leaves its folder without files", async () => {
    const { projectId, project } = await importAndProvision(superproject, false);
    expect(project).toMatchObject({ status: "active", sourceSubmodules: false });
    expect(refsOf(projectId)).toEqual(["refs/heads/main"]);
    const checkout = await verificationCheckout(projectId);
    expect(checkout.written).toEqual([]);
    expect(checkout.missing).toEqual([{ path: "vendor/lib", commit: commitOf(superproject, "vendor/lib") }]);
    expect(Object.keys(filesUnder(checkout.dir)).filter((p) => p.startsWith("vendor/"))).toEqual([]);
  });

  /** A superproject whose .gitmodules says `url` for the gitlink `lib` at `commit`. */
  function withGitlink(name: string, url: string, commit: string): string {
    const dir = join(base, name);
    mkdirSync(dir);
    cli(dir, "init", "-q", "-b", "main");
    writeFileSync(join(dir, ".gitmodules"), `[submodule "lib"]\n\tpath = lib\n\turl = ${url}\n`);
    cli(dir, "add", ".");
    cli(dir, "update-index", "--add", "--cacheinfo", `160000,${commit},lib`);
    cli(dir, "commit", "-q", "-m", "a gitlink");
    return dir;
  }

  async function expectFailed(from: string, reason: RegExp) {
    const { projectId, project, run } = await importAndProvision(from, true);
    expect(run.actions).toMatchObject({ ack: 1, retry: 0, dead_letter: 0 });
    expect(project.status).toBe("failed");
    expect(project.failureReason).toMatch(reason);
    expect(readdirSync(w.root).filter((f) => f.startsWith(canonicalRepo(projectId)))).toEqual([]);
  }

  it("a submodule URL of a kind an import does not accept fails the import naming the submodule", async () => {
    await expectFailed(
      withGitlink("scp-like", "git@example.com:team/lib.git", commitOf(superproject, "vendor/lib")),
      /^the submodule lib's URL git@example\.com:team\/lib\.git: .* not accepted/,
    );
  });

  it("a gitlink whose commit its repository does not hold fails the import naming both", async () => {
    await expectFailed(
      withGitlink("lost-commit", join(base, "lib"), "1".repeat(40)),
      new RegExp(`^the submodule lib \\(${join(base, "lib")}\\) does not hold the commit 1{40}`),
    );
  });

  it("over HTTP, a gitlink on no branch of the submodule's server fails the import", async () => {
    const served = mkdtempSync(join(tmpdir(), "rh-submodules-lost-"));
    cli(served, "clone", "-q", "--bare", join(base, "lib"), "lib");
    const server = await gitHttpServer(served);
    try {
      const sup = withGitlink("lost-over-http", `${server.url}/lib`, "2".repeat(40));
      await expectFailed(
        sup,
        /^the submodule lib's commit 2{40} is not on any branch of http:\/\/127\.0\.0\.1:\d+\/lib$/,
      );
    } finally {
      await server.close();
    }
  });

  it("a submodule inside the server's own data is refused as a local import is", async () => {
    const { projectId: other } = await importAndProvision(superproject, false);
    await expectFailed(
      withGitlink("points-inside", w.store.gitdir(canonicalRepo(other)), commitOf(superproject, "vendor/lib")),
      /is inside this server's own data/,
    );
  });
});

describe("reading .gitmodules", () => {
  it("takes each submodule section's path and URL, quoted or not, and ignores the rest", () => {
    expect(
      parseGitmodules(
        [
          "# a comment",
          '[submodule "vendor/lib"]',
          "\tpath = vendor/lib/",
          '\turl = "../lib.git"',
          "\tbranch = main",
          "[core]\n\tpath = nope\n\turl = nope",
          '[submodule "half"]',
          "\tpath = only-a-path",
          '[submodule "b"]',
          "  url=https://example.com/b.git",
          "  PATH = b",
        ].join("\n"),
      ),
    ).toEqual([
      { name: "vendor/lib", path: "vendor/lib", url: "../lib.git" },
      { name: "b", path: "b", url: "https://example.com/b.git" },
    ]);
  });

  it("reads a relative URL against the superproject's, and refuses what an import refuses", () => {
    const entry = (url: string) => ({ name: "x", path: "x", url });
    expect(submoduleSource({ kind: "http", url: "https://h.example/team/app.git" }, entry("../lib.git"))).toEqual({
      ok: true,
      source: { kind: "http", url: "https://h.example/team/lib.git" },
    });
    expect(submoduleSource({ kind: "http", url: "https://h.example/team/app" }, entry("./sub"))).toEqual({
      ok: true,
      source: { kind: "http", url: "https://h.example/team/app/sub" },
    });
    expect(submoduleSource({ kind: "local", path: "/srv/git/app", url: "/srv/git/app" }, entry("../lib"))).toEqual({
      ok: true,
      source: { kind: "local", path: "/srv/git/lib", url: "/srv/git/lib" },
    });
    const refused = submoduleSource({ kind: "local", path: "/srv/app", url: "/srv/app" }, entry("ssh://h/lib.git"));
    expect(refused).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^the submodule x's URL ssh:\/\/h\/lib\.git: ssh:\/\/ URLs are not accepted/),
    });
  });
});
