import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { repoNamespace, sourceKeys } from "@rhumbatron/core";
import { localFolderBlobStore, readProjectChecks } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { codeStoreCanonicalReader } from "../canonical-reader.ts";
import { ACME, callerAs, emailFor, rejection, seedTenants } from "../testing/fixtures.ts";
import { testServices, testSettings } from "../testing/services.ts";

/** projects.checks over real canonical repositories made with command-line git. */
const t = useTestDatabase();
const PROJECT = "proj_00000000-0000-4000-8000-00000000c001";
const OTHER_PROJECT = "proj_00000000-0000-4000-8000-00000000b001";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, encoding: "utf8" }).trim();

const work = mkdtempSync(join(tmpdir(), "rh-checks-work-"));
const bare = join(testSettings().RHUMBATRON_DATA_DIR, "git", repoNamespace(testServices().config.env), PROJECT);
let generation = -1;

/** Commits `files` (null deletes) in the working copy, pushes to the canonical repository and makes it the head. */
async function commitHead(files: Record<string, string | null>): Promise<string> {
  for (const [path, text] of Object.entries(files)) {
    if (text === null) git(work, "rm", "-q", path);
    else {
      mkdirSync(dirname(join(work, path)), { recursive: true });
      writeFileSync(join(work, path), text);
      git(work, "add", path);
    }
  }
  git(work, "commit", "-q", "--allow-empty", "-m", `generation ${generation + 1}`);
  git(work, "push", "-q", bare, "HEAD:refs/heads/main");
  const commit = git(work, "rev-parse", "HEAD");
  generation += 1;
  await t.db.canonicalGeneration.create({
    data: { projectId: PROJECT, generation, commit, tree: git(work, "rev-parse", "HEAD^{tree}") },
  });
  await t.db.project.update({ where: { id: PROJECT }, data: { canonicalGeneration: generation } });
  return commit;
}

const viewer = () => callerAs(t.db, emailFor("viewer"));
const checksOf = () => viewer().projects.checks({ tenantId: ACME.tenantId, projectId: PROJECT });

beforeAll(async () => {
  await seedTenants(t.db);
  await t.db.project.create({ data: { id: PROJECT, tenantId: ACME.tenantId, name: "checked", status: "active" } });
  mkdirSync(dirname(bare), { recursive: true });
  execFileSync("git", ["init", "-q", "--bare", "-b", "main", bare]);
  git(work, "init", "-q", "-b", "main");
});

describe("projects.checks", () => {
  it("says there is nothing to detect, and to add the checks file, for a repository with only a readme", async () => {
    const commit = await commitHead({ "README.md": "# notes\n" });
    const r = await checksOf();
    expect(r.commit).toBe(commit);
    expect(r.source).toEqual({ kind: "none", hint: "nothing to detect checks from: add .rhumbatron/checks.yml" });
  });

  it("proposes detected checks, with the file to commit and what they rest on, for an npm project without a file", async () => {
    await commitHead({
      "package.json": JSON.stringify({ name: "x", scripts: { test: "vitest run" } }),
      "package-lock.json": JSON.stringify({ name: "x", lockfileVersion: 3, packages: {} }),
    });
    const r = await checksOf();
    if (r.source.kind !== "detected") throw new Error(`expected detected, got ${r.source.kind}`);
    expect(r.source.proposal).toContain("version: 1");
    expect(r.source.reasons.join("\n")).toContain("package-lock.json");
    expect(r.source.file.setup?.map((s) => s.run.slice(0, 2))).toEqual([["npm", "ci"]]);
  });

  it("reads the project's checks file at the head: its checks, setup, requires, registries and blob id", async () => {
    const text = [
      "version: 1",
      "requires: [node>=20]",
      "registries: [registry.npmjs.org]",
      "setup:",
      "  - { id: install, run: [npm, ci], cache: [node_modules], key: [package-lock.json] }",
      "checks:",
      "  - { id: unit, about: the unit tests, run: [npm, test], report: { format: junit, path: r.xml } }",
      "  - { id: lint, run: [npm, run, lint], when: [{ tiers: [high] }] }",
      "",
    ].join("\n");
    await commitHead({ ".rhumbatron/checks.yml": text });
    const r = await checksOf();
    if (r.source.kind !== "file") throw new Error(`expected file, got ${r.source.kind}`);
    expect(r.source.path).toBe(".rhumbatron/checks.yml");
    expect(r.source.blob).toBe(git(work, "rev-parse", "HEAD:.rhumbatron/checks.yml"));
    expect(r.source.file.checks.map((c) => c.id)).toEqual(["unit", "lint"]);
    expect(r.source.file.checks[0]?.report).toEqual({ format: "junit", path: "r.xml" });
    expect(r.source.file.checks[1]?.when).toEqual([{ tiers: ["high"] }]);
    expect(r.source.file.requires).toEqual(["node>=20"]);
    expect(r.source.file.registries).toEqual(["registry.npmjs.org"]);
    expect(r.source.file.setup?.[0]?.run).toEqual(["npm", "ci"]);
  });

  it("answers a malformed file with its problems, line and field, and never fails", async () => {
    await commitHead({
      ".rhumbatron/checks.yml": "version: 1\nchecks:\n  - id: unit\n    run: [npm, test]\n    timeout: 5000\n",
    });
    const r = await checksOf();
    if (r.source.kind !== "invalid") throw new Error(`expected invalid, got ${r.source.kind}`);
    expect(r.source.problems).toEqual([
      expect.objectContaining({ line: 5, field: "checks[0].timeout", message: expect.stringContaining("900") }),
    ]);
    await commitHead({ ".rhumbatron/checks.yml": "version: 1\nchecks: [unterminated\n" });
    const broken = await checksOf();
    if (broken.source.kind !== "invalid") throw new Error(`expected invalid, got ${broken.source.kind}`);
    expect(broken.source.problems[0]?.message).toContain("not valid YAML");
  });

  it("lists the latest setup runs of the project's Candidates, newest first, with cache hit, key and log", async () => {
    await t.db.change.create({
      data: { id: "chg_c1", projectId: PROJECT, title: "a change", riskTier: "low", clientRequestId: "c-1" },
    });
    for (const n of [1, 2]) {
      await t.db.candidate.create({
        data: {
          id: `cand_c00${n}`,
          projectId: PROJECT,
          changeId: "chg_c1",
          compositionKey: `k${n}`,
          baseGeneration: 0,
          baseCommit: "a".repeat(40),
          status: "verifying",
        },
      });
    }
    const evidence = (n: number, at: string, extra: object) =>
      t.db.evidence.create({
        data: {
          id: `ev_setup_${n}`,
          candidateId: `cand_c00${n}`,
          checkId: "setup-install",
          kind: "setup",
          status: "pass",
          coverage: "checked_supported",
          durationMs: 100 * n,
          timeoutSeconds: 600,
          completedAt: new Date(at),
          ...extra,
        },
      });
    await evidence(1, "2026-01-01T00:00:00Z", {
      metrics: { cacheHit: 0 },
      outputKey: "evidence/x/cand_c001/setup-install.log",
      detail: "prepared; saved to the setup cache (key 0123456789ab): node_modules",
    });
    await evidence(2, "2026-01-02T00:00:00Z", {
      metrics: { cacheHit: 1 },
      detail: "restored from the setup cache (key 0123456789ab): node_modules; the command did not run",
    });
    const r = await checksOf();
    expect(r.setupRuns.map((s) => [s.candidateId, s.cacheHit, s.cacheKey, s.logKey, s.durationMs])).toEqual([
      ["cand_c002", true, "0123456789ab", null, 200],
      ["cand_c001", false, "0123456789ab", "evidence/x/cand_c001/setup-install.log", 100],
    ]);
  });

  it("reads the same from the code store the worker publishes, for a web host without the repositories", async () => {
    const commit = await commitHead({
      ".rhumbatron/checks.yml": "version: 1\nchecks:\n  - id: test\n    run: [node, --test]\n",
      "package.json": JSON.stringify({ scripts: { test: "node --test" } }),
    });
    const local = await checksOf();
    const blobs = localFolderBlobStore(mkdtempSync(join(tmpdir(), "rh-checks-code-")));
    const reader = codeStoreCanonicalReader(t.db, blobs);
    const read = () => readProjectChecks(t.db, reader, { tenantId: ACME.tenantId, projectId: PROJECT });
    // Before the worker has published the generation's code store, it is unreadable, never guessed.
    expect((await read()).source).toMatchObject({ kind: "unreadable" });
    // Published as the worker does (code-store.ts): code.json (path -> blob id) and each file's bytes.
    const listed = git(bare, "ls-tree", "-r", "--full-tree", commit)
      .split("\n")
      .map((line) => /^\d+ blob ([0-9a-f]{40})\t(.+)$/.exec(line))
      .flatMap((m) => (m?.[1] && m[2] ? [[m[2], m[1]] as const] : []));
    const tree = git(bare, "rev-parse", `${commit}^{tree}`);
    await blobs.put(
      sourceKeys.code(PROJECT, tree),
      new TextEncoder().encode(JSON.stringify(Object.fromEntries(listed))),
    );
    for (const [, blob] of listed) {
      await blobs.put(
        sourceKeys.blob(PROJECT, blob),
        execFileSync("git", ["--git-dir", bare, "cat-file", "blob", blob]),
      );
    }
    const fromStore = await read();
    expect(fromStore.source).toEqual(local.source);
    expect(fromStore.source.kind).toBe("file");
    expect(await reader.files(PROJECT, "0".repeat(40))).toBeNull();
  });

  it("answers another tenant's project as not found", async () => {
    const e = await rejection(viewer().projects.checks({ tenantId: ACME.tenantId, projectId: OTHER_PROJECT }));
    expect(e.code).toBe("NOT_FOUND");
  });
});
