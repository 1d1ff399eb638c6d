import { execFileSync, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { testServices, testSettings } from "@rhumbatron/api/testing";
import { repoNamespace, sourceKeys } from "@rhumbatron/core";
import { createDb, type Role, readTenantSecrets, recordContextPacket } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { build } from "tsup";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiServer, startApiServer } from "./testing/api-server.ts";
import { ACME, SHOP, seedCandidate, seedWithTokens } from "./testing/seed.ts";

// The CLI as a user runs it: a child process through the bin shim, against a real HTTP server in
// this process. Always spawned asynchronously: a synchronous spawn would block the server it calls.
const t = useTestDatabase();
const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const PKG = fileURLToPath(new URL("..", import.meta.url));
// The CLI built once, as the published package builds it (tsup, the workspace packages bundled in),
// so each of this file's many commands starts in well under a second instead of compiling the
// TypeScript source through tsx every time. The first test runs the source through the bin shim.
const BUILT = join(PKG, "node_modules", ".cache", `cli-test-${process.pid}`);
const BIN = join(BUILT, "bin.js");
const EXAMPLE = fileURLToPath(new URL("../examples/wishlist-change.json", import.meta.url));
const CREATED = "cand_00000000000000000000000000000d01";
const VERIFIED = "cand_00000000000000000000000000000d02";
const REJECTED = "cand_00000000000000000000000000000d03";
let server: ApiServer;
let tokens: Record<Role, string>;
let tree: string;

beforeAll(async () => {
  await build({
    config: false,
    entry: { cli: join(PKG, "src/cli.ts") },
    format: ["esm"],
    platform: "node",
    target: "node20",
    outDir: BUILT,
    tsconfig: join(PKG, "tsconfig.build.json"),
    removeNodeProtocol: false,
    noExternal: [/^@rhumbatron\//],
    // The package's own dependencies stay imports, as in the published build (tsup reads them from
    // the package.json of the folder it runs in, which here is the repository's).
    external: Object.keys(JSON.parse(await readFile(join(PKG, "package.json"), "utf8")).dependencies),
    silent: true,
  });
  // The built module's main() is what bin/rhumbatron.js calls in an installed package.
  await writeFile(
    join(BUILT, "bin.js"),
    'import { main } from "./cli.js";\nprocess.exitCode = await main(process.argv);\n',
  );
  tokens = await seedWithTokens(t.db);
  server = await startApiServer(t.db);
  await seedCandidate(t.db, { changeId: "chg_cli_created", candidateId: CREATED, status: "created" });
  ({ tree } = await seedCandidate(t.db, { changeId: "chg_cli_verified", candidateId: VERIFIED, status: "verified" }));
  await seedCandidate(t.db, { changeId: "chg_cli_rejected", candidateId: REJECTED, status: "rejected" });
});
afterAll(async () => {
  await server?.close();
  await rm(BUILT, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command with only the given RHUMBATRON_* settings (none inherited from the developer's shell). */
function run(
  args: string[],
  settings: { url?: string; token?: string; input?: string; env?: Record<string, string> } = {},
  command: string[] = [process.execPath, BIN],
): Promise<Run> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith("RHUMBATRON_") && k !== "NODE_OPTIONS") env[k] = v;
  if (settings.url) env.RHUMBATRON_URL = settings.url;
  if (settings.token) env.RHUMBATRON_TOKEN = settings.token;
  Object.assign(env, settings.env ?? {});
  const [exe, ...pre] = command as [string, ...string[]];
  return new Promise((resolve, reject) => {
    const child = spawn(exe, [...pre, ...args], {
      cwd: REPO,
      env,
      stdio: [settings.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    if (settings.input !== undefined) child.stdin?.end(settings.input);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => (stdout += d));
    child.stderr?.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const as = (role: Role) => ({ url: server.url, token: tokens[role] });

describe("rhumbatron CLI", () => {
  it("runs as `npx rhumbatron` from the repository, with help that documents the exit codes", async () => {
    const r = await run(["--help"], {}, ["npx", "--no-install", "rhumbatron"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: rhumbatron [options] [command]");
    expect(r.stdout).toContain("3 stale");
    expect(r.stdout).toContain("5 server unreachable");
    const sub = await run(["candidate", "promote", "--help"]);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain("Usage: rhumbatron candidate promote [options] <candidateId>");
    expect(sub.stdout).toContain("--token <token>");
  });

  it("projects import --username takes the password from stdin (--password-stdin) or RHUMBATRON_IMPORT_PASSWORD, sealed and never printed", async () => {
    const secret = "tok-cli-9f8e7d6c5b4a";
    const piped = await run(
      [
        "projects",
        "import",
        "cli-private",
        "--from",
        "https://git.example.com/team/private.git",
        "--username",
        "ada",
        "--password-stdin",
      ],
      { ...as("admin"), input: `${secret}\n` },
    );
    expect(piped.stderr).toBe("");
    expect(piped.code).toBe(0);
    expect(piped.stdout).not.toContain(secret);
    const id = /^(proj_\S+) {2}cli-private:/m.exec(piped.stdout)?.[1] as string;
    const row = await t.db.importCredential.findUniqueOrThrow({ where: { projectId: id } });
    expect(row.sealed).not.toContain(secret);
    const fromEnv = await run(
      [
        "projects",
        "import",
        "cli-private-env",
        "--from",
        "https://git.example.com/team/private.git",
        "--username",
        "ada",
      ],
      { ...as("admin"), env: { RHUMBATRON_IMPORT_PASSWORD: secret } },
    );
    expect(fromEnv.code).toBe(0);
    const envId = /^(proj_\S+) {2}cli-private-env:/m.exec(fromEnv.stdout)?.[1] as string;
    expect(await t.db.importCredential.count({ where: { projectId: envId } })).toBe(1);
    const before = await t.db.project.count();
    const none = await run(
      [
        "projects",
        "import",
        "cli-private-none",
        "--from",
        "https://git.example.com/team/private.git",
        "--username",
        "ada",
      ],
      as("admin"),
    );
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("--password-stdin");
    const onPath = await run(
      [
        "projects",
        "import",
        "cli-private-path",
        "--from",
        "/srv/git/shop.git",
        "--username",
        "ada",
        "--password-stdin",
      ],
      { ...as("admin"), input: secret },
    );
    expect(onPath.code).toBe(1);
    expect(onPath.stderr).toContain("credentials are only used for an http:// or https:// source");
    expect(onPath.stderr).not.toContain(secret);
    expect(await t.db.project.count()).toBe(before);
  });

  it("projects import queues an import for an admin; bad sources are exit 1 and writes nothing; below admin is exit 4; projects show says why one failed", async () => {
    const imported = await run(
      ["projects", "import", "cli-imported", "--from", "https://git.example.com/team/shop.git", "--branch", "trunk"],
      as("admin"),
    );
    expect(imported.stderr).toBe("");
    expect(imported.code).toBe(0);
    const projectId =
      /^(proj_\S+) {2}cli-imported: provisioning from https:\/\/git\.example\.com\/team\/shop\.git \(branch trunk\)$/m.exec(
        imported.stdout,
      )?.[1] as string;
    expect(projectId).toBeDefined();
    expect(await t.db.project.findUniqueOrThrow({ where: { id: projectId } })).toMatchObject({
      status: "provisioning",
      sourceKind: "import",
      sourceUrl: "https://git.example.com/team/shop.git",
      sourceBranch: "trunk",
      sourceSubmodules: false,
    });
    const withSubmodules = await run(
      ["projects", "import", "cli-with-submodules", "--from", "/srv/git/app", "--submodules"],
      as("admin"),
    );
    expect(withSubmodules.stdout).toContain("cli-with-submodules: provisioning from /srv/git/app, with its submodules");
    expect(
      await t.db.project.findFirstOrThrow({
        where: { name: "cli-with-submodules" },
        select: { sourceSubmodules: true },
      }),
    ).toEqual({ sourceSubmodules: true });

    const projectsBefore = await t.db.project.count();
    const ssh = await run(
      ["projects", "import", "cli-refused", "--from", "git@example.com:team/shop.git"],
      as("admin"),
    );
    expect(ssh.code).toBe(1);
    expect(ssh.stderr).toContain("an http:// or https:// URL, a file:// URL or an absolute path on the server");
    const secret = await run(
      ["projects", "import", "cli-refused", "--from", "https://ada:s3cret@git.example.com/shop.git"],
      as("admin"),
    );
    expect(secret.code).toBe(1);
    expect(secret.stderr).toContain("the credentials field, or --username with --password-stdin");
    expect(secret.stderr).not.toContain("s3cret");
    const member = await run(["projects", "import", "cli-refused", "--from", "/srv/git/shop.git"], as("member"));
    expect(member.code).toBe(4);
    expect(await t.db.project.count()).toBe(projectsBefore);

    // What the worker records when the source cannot be imported, as the CLI shows it.
    await t.db.project.update({
      where: { id: projectId },
      data: { status: "failed", failureReason: "https://git.example.com/team/shop.git was not found (HTTP 404)" },
    });
    const show = await run(["projects", "show", projectId], as("viewer"));
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("  status      failed");
    expect(show.stdout).toContain("  source      imported from https://git.example.com/team/shop.git (branch trunk)");
    expect(show.stdout).toContain("  failed      https://git.example.com/team/shop.git was not found (HTTP 404)");
    const json = await run(["projects", "show", projectId, "--json"], as("viewer"));
    expect(JSON.parse(json.stdout)).toMatchObject({
      status: "failed",
      failureReason: expect.stringContaining("HTTP 404"),
    });
  });

  it("projects import --push makes an empty project waiting for a push and prints the git push command once; push-access replaces the token", async () => {
    const made = await run(["projects", "import", "cli-pushed", "--push"], as("admin"));
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);
    const projectId = /^(proj_\S+) {2}cli-pushed: waiting for a push to http:\/\/\S+\/git\/push\/proj_\S+\.git$/m.exec(
      made.stdout,
    )?.[1] as string;
    expect(projectId).toBeDefined();
    const command = /^ {2}(git push http:\/\/x:rpt_\S+@\S+\/git\/push\/proj_\S+\.git HEAD:refs\/heads\/main)$/m.exec(
      made.stdout,
    )?.[1];
    expect(command).toContain(projectId);
    expect(await t.db.project.findUniqueOrThrow({ where: { id: projectId } })).toMatchObject({
      status: "awaiting_push",
      sourceKind: "push",
    });
    const show = await run(["projects", "show", projectId], as("viewer"));
    expect(show.stdout).toContain("  status      awaiting_push");
    expect(show.stdout).toContain(`rhumbatron projects push-access ${projectId}`);
    expect(show.stdout).not.toContain("rpt_");

    const again = await run(["projects", "push-access", projectId], as("admin"));
    expect(again.code).toBe(0);
    const second = /^ {2}(git push \S+ HEAD:refs\/heads\/main)$/m.exec(again.stdout)?.[1];
    expect(second).toBeDefined();
    expect(second).not.toBe(command);

    const before = await t.db.project.count();
    const both = await run(["projects", "import", "cli-both", "--push", "--from", "/srv/git/shop.git"], as("admin"));
    expect(both.code).toBe(1);
    const neither = await run(["projects", "import", "cli-neither"], as("admin"));
    expect(neither.code).toBe(1);
    expect(neither.stderr).toContain("give --from <url>, or --push");
    const member = await run(["projects", "import", "cli-member", "--push"], as("member"));
    expect(member.code).toBe(4);
    expect(await t.db.project.count()).toBe(before);
  });

  it("projects create makes a project from the template for an admin; below admin is exit 4 and writes nothing", async () => {
    const created = await run(["projects", "create", "cli-template"], as("admin"));
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    const projectId = /^(proj_\S+) {2}cli-template: provisioning from the template$/m.exec(
      created.stdout,
    )?.[1] as string;
    expect(projectId).toBeDefined();
    expect(await t.db.project.findUniqueOrThrow({ where: { id: projectId } })).toMatchObject({
      name: "cli-template",
      status: "provisioning",
      sourceKind: "template",
    });
    const before = await t.db.project.count();
    const member = await run(["projects", "create", "cli-refused"], as("member"));
    expect(member.code).toBe(4);
    const bad = await run(["projects", "create", "Not A Name"], as("admin"));
    expect(bad.code).toBe(1);
    expect(await t.db.project.count()).toBe(before);
  });

  it("projects checks prints the checks file at the project's head, its checks and the latest setup runs; a bad file is its problems", async () => {
    const projectId = "proj_00000000-0000-4000-8000-00000000c101";
    await t.db.project.create({
      data: { id: projectId, tenantId: ACME.tenantId, name: "cli-checks", status: "active" },
    });
    const bare = join(testSettings().RHUMBATRON_DATA_DIR, "git", repoNamespace(testServices().config.env), projectId);
    const work = await mkdtemp(join(tmpdir(), "rh-cli-checks-"));
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
        cwd: work,
        encoding: "utf8",
      }).trim();
    execFileSync("git", ["init", "-q", "--bare", "-b", "main", bare]);
    git("init", "-q", "-b", "main");
    const head = async (generation: number, text: string) => {
      await mkdir(join(work, ".rhumbatron"), { recursive: true });
      await writeFile(join(work, ".rhumbatron/checks.yml"), text);
      git("add", "-A");
      git("commit", "-q", "-m", `g${generation}`);
      git("push", "-q", bare, "HEAD:refs/heads/main");
      await t.db.canonicalGeneration.create({
        data: { projectId, generation, commit: git("rev-parse", "HEAD"), tree: git("rev-parse", "HEAD^{tree}") },
      });
      await t.db.project.update({ where: { id: projectId }, data: { canonicalGeneration: generation } });
    };
    await head(0, await readFile(join(REPO, "templates/shop/.rhumbatron/checks.yml"), "utf8"));
    const shown = await run(["projects", "checks", projectId], as("viewer"));
    expect(shown.stderr).toBe("");
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(
      `from .rhumbatron/checks.yml (blob ${git("rev-parse", "HEAD:.rhumbatron/checks.yml")})`,
    );
    expect(shown.stdout).toMatch(/^build\s+npm run -s build\s+every Change/m);
    expect(shown.stdout).toMatch(/^contract\s.*tiers: medium, high, critical\s+contract procedure/m);
    expect(shown.stdout).toMatch(/^protected-invariant-cart\s.*invariant: cart/m);
    expect(shown.stdout).toContain("requires    node>=20");
    expect(shown.stdout).toContain("recent setup runs:\n  none yet");
    await head(1, "version: 1\nchecks: []\n");
    const bad = await run(["projects", "checks", projectId], as("viewer"));
    expect(bad.code).toBe(0);
    expect(bad.stdout).toContain(".rhumbatron/checks.yml:2: checks: declare at least one check");
    const json = JSON.parse((await run(["projects", "checks", projectId, "--json"], as("viewer"))).stdout);
    expect(json.source.kind).toBe("invalid");
  });

  it("whoami --json prints the token's tenant and role", async () => {
    const r = await run(["whoami", "--json"], as("approver"));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).tenant).toEqual({
      tenantId: ACME.tenantId,
      slug: "acme",
      name: "Acme",
      role: "approver",
    });
    const human = await run(["whoami"], as("viewer"));
    expect(human.stdout.trim()).toBe("tenant acme (ten_acme, Acme) as viewer");
  });

  it("change create sends the example Work Graph file and is idempotent on --request-id", async () => {
    const args = ["change", "create", "--project", SHOP, "--file", EXAMPLE, "--request-id", "cli-1", "--json"];
    const r = await run(args, as("member"));
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ created: true, clientRequestId: "cli-1" });
    expect(await t.db.task.count({ where: { changeId: out.changeId } })).toBe(3);
    const again = await run(args, as("member"));
    expect(JSON.parse(again.stdout)).toEqual({ ...out, created: false });
  });

  it("change create refuses a bad file locally with exit 1, writing nothing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rbt-cli-"));
    const bad = join(dir, "graph.json");
    await writeFile(
      bad,
      JSON.stringify({ title: "x", riskTier: "low", tasks: [{ key: "a", title: "a", dependsOn: ["z"] }] }),
    );
    const before = await t.db.change.count();
    const r = await run(["change", "create", "--project", SHOP, "--file", bad], as("member"));
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toEqual([
      `error: ${bad} is not a valid Change: tasks: Task "a" depends on "z", which is not in the Work Graph; fix it and try again (nothing was sent)`,
    ]);
    const missing = await run(["change", "create", "--project", SHOP, "--file", join(dir, "nope.json")], as("member"));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("(ENOENT); check the --file path");
    const usage = await run(["change", "create", "--file", bad], as("member"));
    expect(usage.code).toBe(1);
    expect(usage.stderr).toContain("required option '--project <id>' not specified");
    expect(await t.db.change.count()).toBe(before);
  });

  it("candidate promote of a Candidate that is not verified exits 2 and lists every block", async () => {
    const r = await run(["candidate", "promote", CREATED], as("approver"));
    expect(r.code).toBe(2);
    expect(r.stdout.trim().split("\n")).toEqual([
      `blocked: ${CREATED} cannot be promoted yet:`,
      "  - the Candidate is created, not verified",
      "  - no Verification Plan",
      "  - the composed commit is not in the Candidate fork",
    ]);
    const json = await run(["candidate", "promote", CREATED, "--json"], as("approver"));
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({
      outcome: "blocked",
      blocks: [
        "the Candidate is created, not verified",
        "no Verification Plan",
        "the composed commit is not in the Candidate fork",
      ],
    });
  });

  it("candidate show prints plan, Evidence, gaps, approval and the tree hash; a viewer cannot approve (exit 4)", async () => {
    const show = await run(["candidate", "show", VERIFIED], as("viewer"));
    expect(show.code).toBe(0);
    // The decision comes first, with the one command its state allows.
    expect(show.stdout.split("\n").slice(0, 3)).toEqual([
      `candidate ${VERIFIED}: verified`,
      "  Ready to approve: every required check passed",
      "    - a person approves this exact tree: policy-1 gates high risk",
    ]);
    expect(show.stdout).toContain(`  next: rhumbatron candidate approve ${VERIFIED} --tree ${tree}\n`);
    // A rejected Candidate offers no approval and no promotion.
    const rejected = await run(["candidate", "show", REJECTED], as("viewer"));
    expect(rejected.stdout.split("\n")[1]).toBe("  Rejected: the gate found gaps");
    expect(rejected.stdout).not.toMatch(/approve with|candidate promote|verification succeeded|approval: pending/);
    // Its way on: the Change's Tasks run again for a new Candidate on the current generation.
    expect(rejected.stdout).toMatch(/next: rhumbatron task retry <taskId> \(any Task of change \S+\)/);
    expect(show.stdout).toContain(`tree hash     ${tree}`);
    expect(show.stdout).toContain("- build (build, 120 s): npm run build; r");
    expect(show.stdout).toContain("- build: pass, checked_supported, 900 ms");
    expect(show.stdout).toContain("gaps:\n  none");
    expect(show.stdout).toContain(`approve with: rhumbatron candidate approve ${VERIFIED} --tree ${tree}`);
    const denied = await run(["candidate", "approve", VERIFIED, "--tree", tree], as("viewer"));
    expect(denied.code).toBe(4);
    expect(denied.stderr).toMatch(
      /^error: Requires the approver role or above in this tenant; use a token with that role/,
    );
    const ok = await run(["candidate", "approve", VERIFIED, "--tree", tree, "--note", "ship it"], as("approver"));
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`approved ${VERIFIED} for tree ${tree}`);
    // The same approval again (a retried script): exit 0, said as already done, nothing written.
    const approvals = await t.db.approval.count();
    const again = await run(["candidate", "approve", VERIFIED, "--tree", tree], as("approver"));
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`already approved ${VERIFIED}`);
    expect(await t.db.approval.count()).toBe(approvals);
    const twice = await run(["candidate", "reject", VERIFIED, "--tree", tree, "--note", "no"], as("approver"));
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain("already approved; the first decision is final");
  });

  it("candidate show prints the conflict review: each finding with what it cites, an unsupported one as changing nothing", async () => {
    const items = [
      { id: "ctx_1", path: "src/catalog.ts", blob: "a".repeat(40), size: 10, why: "the base (generation 0)" },
      { id: "ctx_2", path: "src/catalog.ts", blob: "c".repeat(40), size: 12, why: "Task a's version (cs_1)" },
    ];
    await t.db.contextPacket.create({
      data: {
        id: "ctxp_crev_cli",
        projectId: SHOP,
        purpose: "conflict_review",
        candidateId: REJECTED,
        indexSource: "none",
        items,
        budget: { maxBytes: 96000, maxItems: 40, usedBytes: 22 },
      },
    });
    await t.db.conflictReview.create({
      data: {
        id: "crev_cli",
        candidateId: REJECTED,
        packetId: "ctxp_crev_cli",
        status: "completed",
        model: "reviewer-test",
        findings: {
          create: [
            {
              id: "crf_cli_1",
              candidateId: REJECTED,
              n: 1,
              severity: "blocking",
              message: "the mug is renamed twice",
              citations: ["ctx_1", "ctx_2"],
              supported: true,
            },
            {
              id: "crf_cli_2",
              candidateId: REJECTED,
              n: 2,
              severity: "advisory",
              message: "made up",
              citations: ["ctx_9"],
              supported: false,
            },
          ],
        },
      },
    });
    const show = await run(["candidate", "show", REJECTED], as("viewer"));
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(
      [
        "conflict review: completed by reviewer-test",
        "  - blocking: the mug is renamed twice [cites ctx_1 src/catalog.ts, ctx_2 src/catalog.ts]",
        "  - unsupported advisory (changes nothing): made up [cites ctx_9 (no such item)]",
      ].join("\n"),
    );
    const other = await run(["candidate", "show", CREATED], as("viewer"));
    expect(other.stdout).toContain("conflict review: none (no two Tasks changed the same file)");
  });

  it("candidate show says a reused record's check did not run here, and whose run it is", async () => {
    await t.db.evidence.create({
      data: {
        id: "ev_cli_reused",
        candidateId: REJECTED,
        checkId: "build",
        kind: "build",
        status: "pass",
        coverage: "checked_supported",
        durationMs: 0,
        timeoutSeconds: 120,
        reusedFrom: `ev_${VERIFIED}`,
        detail: "reused",
        completedAt: new Date(),
      },
    });
    try {
      const show = await run(["candidate", "show", REJECTED], as("viewer"));
      expect(show.stdout).toContain(
        `  - build: pass, checked_supported, reused from ${VERIFIED} (did not run here); reused\n`,
      );
      const json = await run(["candidate", "show", REJECTED, "--json"], as("viewer"));
      const parsed = JSON.parse(json.stdout) as { evidence: { id: string; reusedFrom: unknown }[] };
      expect(parsed.evidence.find((e) => e.id === "ev_cli_reused")?.reusedFrom).toEqual({
        evidenceId: `ev_${VERIFIED}`,
        candidateId: VERIFIED,
      });
    } finally {
      await t.db.evidence.delete({ where: { id: "ev_cli_reused" } });
    }
  });

  it("change watch exits 2 when the Candidate was rejected", async () => {
    const r = await run(["change", "watch", "chg_cli_rejected", "--interval", "10"], as("viewer"));
    expect(r.code).toBe(2);
    expect(r.stdout).toContain("task a: new -> completed");
    expect(r.stdout).toContain(`rejected: candidate ${REJECTED} did not pass`);
  });

  it("sandbox budget shows the tenant's meter; --set raises it for an admin and is refused below admin", async () => {
    const show = await run(["sandbox", "budget", "--json"], as("viewer"));
    expect(show.stderr).toBe("");
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({
      tenantId: ACME.tenantId,
      usedSeconds: 0,
      reservedSeconds: 0,
      budget: { seconds: 18_000, source: "default" },
    });

    const denied = await run(["sandbox", "budget", "--set", "72000"], as("operator"));
    expect(denied.code).toBe(4);
    expect(denied.stderr).toMatch(/^error: Requires the admin role or above in this tenant/);
    const zero = await run(["sandbox", "budget", "--set", "0"], as("admin"));
    expect(zero.code).toBe(1);
    expect(zero.stderr).toContain("expected a positive integer");
    const tooBig = await run(["sandbox", "budget", "--set", "26784001"], as("admin"));
    expect(tooBig.code).toBe(1);
    expect(tooBig.stderr.trim()).toBe(
      "error: the budget must be at most 26784000 seconds (10 workspaces for 31 days), got 26784001 (nothing was sent)",
    );
    expect(await t.db.tenantSandboxBudget.count()).toBe(0);

    const set = await run(["sandbox", "budget", "--set", "72000"], as("admin"));
    expect(set.stderr).toBe("");
    expect(set.code).toBe(0);
    expect(set.stdout).toContain(`budget set to 72000 s for tenant ${ACME.tenantId} (was: none of its own)`);
    expect(set.stdout).toMatch(/\d{4}-\d{2}: 72000 s of 72000 s left/);
    expect(await t.db.tenantSandboxBudget.findUniqueOrThrow({ where: { tenantId: ACME.tenantId } })).toMatchObject({
      monthlySeconds: 72_000,
      updatedBy: "usr_acme_admin",
    });
    const human = await run(["sandbox", "budget"], as("viewer"));
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^ {2}budget +72000 s \(this tenant's own budget, set by admin@acme\.test at /m);
    expect(human.stdout).toContain("raise it (tenant admin): rhumbatron sandbox budget --set <seconds>");
  });

  it("change create --land queues the Change; queue list shows what it waits for; change land --off takes it out", async () => {
    const created = await run(
      ["change", "create", "--project", SHOP, "--file", EXAMPLE, "--request-id", "cli-land", "--land", "--json"],
      as("member"),
    );
    expect(created.code).toBe(0);
    const { changeId } = JSON.parse(created.stdout) as { changeId: string };
    const queue = await run(["queue", "list", "--project", SHOP], as("viewer"));
    expect(queue.code).toBe(0);
    expect(queue.stdout).toMatch(/^queue: running$/m);
    expect(queue.stdout).toMatch(new RegExp(`^1\\s+${changeId}\\s+tasks\\s+-\\s+\\S+\\s+0 of 3 Tasks completed$`, "m"));
    // An admin pauses, drains and resumes the queue; each is said back, the same again changes nothing.
    expect((await run(["queue", "pause", "--project", SHOP], as("member"))).code).toBe(4);
    const paused = await run(["queue", "pause", "--project", SHOP], as("admin"));
    expect(paused.stdout.trim()).toBe(`the landing queue of ${SHOP} is paused (was running)`);
    expect((await run(["queue", "pause", "--project", SHOP], as("admin"))).stdout.trim()).toBe(
      `the landing queue of ${SHOP} is already paused`,
    );
    expect((await run(["queue", "list", "--project", SHOP], as("viewer"))).stdout).toMatch(
      /^queue: paused since \S+: nothing lands until an admin resumes it \(rhumbatron queue resume\)$/m,
    );
    expect((await run(["queue", "drain", "--project", SHOP], as("admin"))).stdout.trim()).toBe(
      `the landing queue of ${SHOP} is draining (was paused)`,
    );
    expect((await run(["queue", "resume", "--project", SHOP], as("admin"))).stdout.trim()).toBe(
      `the landing queue of ${SHOP} is running (was draining)`,
    );
    const events = await t.db.outboxRow.findMany({
      where: { projectId: SHOP, eventType: "landing.queue_changed" },
      orderBy: { id: "asc" },
    });
    expect(events.map((e) => (e.envelope as { payload: { state: string } }).payload.state)).toEqual([
      "paused",
      "draining",
      "running",
    ]);
    const off = await run(["change", "land", changeId, "--off"], as("member"));
    expect(off.stdout.trim()).toBe(`change ${changeId} does not land by itself`);
    expect((await t.db.change.findUniqueOrThrow({ where: { id: changeId } })).landWhenReady).toBe(false);
    const empty = await run(["queue", "list", "--project", SHOP, "--json"], as("viewer"));
    expect(JSON.parse(empty.stdout)).toEqual([]);
    // Landing a Change that is already promoted is refused with the reason (exit 2), nothing written.
    await t.db.change.update({ where: { id: changeId }, data: { status: "promoted" } });
    const refused = await run(["change", "land", changeId], as("member"));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("there is nothing left to land");
  }, 120_000);

  it("tests lists the flaky and broken tests; an admin quarantines one with a reason and releases it; a member cannot", async () => {
    const at = new Date("2026-11-02T00:00:00Z");
    const row = { projectId: SHOP, checkId: "unit", statusSince: at, lastRunAt: at };
    await t.db.testStatus.createMany({
      data: [
        { ...row, testId: "cart > adds", name: "cart > adds", status: "flaky", runs: 9, flakyRuns: 2, delayedCount: 2 },
        { ...row, testId: "cart > totals", name: "cart > totals", status: "broken", runs: 4, failedRuns: 3 },
        { ...row, testId: "cart > empty", name: "cart > empty", status: "ok", runs: 4 },
      ],
    });
    const listed = await run(["tests", "--project", SHOP], as("viewer"));
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split("\n")).toEqual([
      "broken unit › cart > totals",
      "       flaky on 0 of 4 runs, 3 failed, since 2026-11-02",
      "flaky  unit › cart > adds",
      "       flaky on 2 of 9 runs, 0 failed, since 2026-11-02; held up 2 Candidates",
    ]);
    const quarantine = ["tests", "quarantine", "unit", "cart > adds", "--project", SHOP, "--reason", "clock-dependent"];
    expect((await run(quarantine, as("member"))).code).toBe(4);
    const bad = await run([...quarantine, "--until", "someday"], as("admin"));
    expect([bad.code, bad.stderr.trim()]).toEqual([
      1,
      "error: --until someday is not a time: give one as 2027-01-31 or 2027-01-31T12:00:00Z",
    ]);
    const past = await run([...quarantine, "--until", "2020-01-01"], as("admin"));
    expect(past.code).toBe(1);
    expect(past.stderr).toContain("the quarantine's expiry is in the past");
    const done = await run([...quarantine, "--until", "2099-01-31"], as("admin"));
    expect(done.stdout.trim()).toMatch(
      /^unit › cart > adds: in quarantine until 2099-01-31T00:00:00.000Z \(owner admin@acme\.test: clock-dependent\)$/,
    );
    const only = await run(["tests", "--project", SHOP, "--quarantined", "--json"], as("viewer"));
    expect((JSON.parse(only.stdout) as { testId: string }[]).map((r) => r.testId)).toEqual(["cart > adds"]);
    const unknown = await run(["tests", "quarantine", "unit", "nope", "--project", SHOP, "--reason", "x"], as("admin"));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("has reported no test");
    const released = await run(["tests", "release", "unit", "cart > adds", "--project", SHOP], as("admin"));
    expect(released.stdout.trim()).toBe("unit › cart > adds: not in quarantine: its failures block");
    const events = await t.db.outboxRow.findMany({ where: { projectId: SHOP, eventType: "test.quarantine_changed" } });
    expect(events.map((e) => (e.envelope as { payload: { quarantined: boolean } }).payload.quarantined)).toEqual([
      true,
      false,
    ]);
  }, 120_000);

  it("change show prints the Change, its Tasks and the Task its newest Candidate's culprit search named", async () => {
    const task = await t.db.task.findFirstOrThrow({ where: { changeId: "chg_cli_rejected" } });
    const culprit = {
      checkId: "unit",
      tests: ["cart > adds"],
      task: { id: task.id, key: task.key, title: task.title, changeSetId: "cs_x", position: 3 },
      of: 4,
      probes: [
        { prefix: 2, evidenceId: "ev_p2", failed: false },
        { prefix: 3, evidenceId: "ev_p3", failed: true },
      ],
    };
    await t.db.candidate.update({ where: { id: REJECTED }, data: { culprit } });
    const r = await run(["change", "show", "chg_cli_rejected"], as("viewer"));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`candidate ${REJECTED}: rejected`);
    expect(r.stdout).toContain(
      `  culprit: Task ${task.key} "${task.title}", ChangeSet 3 of 4, first fails unit (cart > adds); found in 2 extra runs of unit`,
    );
    expect(r.stdout).toContain("    prefix 2: passes (Evidence ev_p2)\n    prefix 3: fails (Evidence ev_p3)");
    expect(r.stdout).toContain(`  retry it with: rhumbatron task retry ${task.id}`);
    const json = JSON.parse((await run(["change", "show", "chg_cli_rejected", "--json"], as("viewer"))).stdout);
    expect(json.candidates[0].culprit).toEqual(culprit);
    expect((await run(["change", "show", "chg_nope"], as("viewer"))).code).toBe(1);
  }, 120_000);

  it("change context prints the Context Packet an Agent run was given; an unknown run is exit 1 with the reason", async () => {
    const task = await t.db.task.findFirstOrThrow({ where: { changeId: "chg_cli_rejected" } });
    await t.db.agentRun.create({
      data: {
        id: "run_cli_ctx",
        taskId: task.id,
        changeId: "chg_cli_rejected",
        agentId: "agt_a",
        wakeCommandId: "cmd_cli_ctx",
        reason: "dispatch",
        status: "completed",
      },
    });
    const none = await run(["change", "context", "run_cli_ctx"], as("viewer"));
    expect(none.stdout.trim()).toBe(
      "run run_cli_ctx has recorded no Context Packet (it records one before its Agent starts)",
    );
    await recordContextPacket(t.db, {
      id: "ctxp_cli_ctx",
      purpose: "agent_run",
      projectId: SHOP,
      runId: "run_cli_ctx",
      tree: "abc1234",
      indexSource: "stored",
      note: null,
      items: [{ id: "ctx_1", path: "src/cart.ts", blob: "b".repeat(40), size: 2048, why: "the Task declares it" }],
      omitted: [{ path: "data/huge.json", why: "over the packet's 200,000 bytes" }],
      budget: { maxBytes: 200_000, maxItems: 40, usedBytes: 2048 },
    });
    const human = await run(["change", "context", "run_cli_ctx"], as("viewer"));
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(
      "ctxp_cli_ctx of run run_cli_ctx (change chg_cli_rejected): 1 files, 2.0 KB of 200.0 KB",
    );
    expect(human.stdout).toMatch(/^ctx_1\s+src\/cart\.ts\s+2048\s+the Task declares it$/m);
    expect(human.stdout).toContain("  data/huge.json: over the packet's 200,000 bytes");
    const json = await run(["change", "context", "run_cli_ctx", "--json"], as("viewer"));
    expect(JSON.parse(json.stdout)).toMatchObject({ runId: "run_cli_ctx", packet: { id: "ctxp_cli_ctx" } });
    const missing = await run(["change", "context", "run_nope"], as("viewer"));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("agent run run_nope not found");
  }, 120_000);

  it("task retry makes a new attempt of a Task whose Candidate was rejected and refuses one that is not retryable (exit 2)", async () => {
    // A completed Task whose Change's Candidate verified has nothing to go on from.
    const done = await t.db.task.findFirstOrThrow({ where: { changeId: "chg_cli_verified" } });
    const refused = await run(["task", "retry", done.id], as("member"));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("only a failed or blocked Task can be retried");
    // One whose Change's Candidate was rejected runs again: the way on from a rejection.
    const task = await t.db.task.findFirstOrThrow({ where: { changeId: "chg_cli_rejected" } });
    const r = await run(["task", "retry", task.id, "--json"], as("member"));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ taskId: task.id, attempt: 2 });
    const viewer = await run(["task", "retry", task.id], as("viewer"));
    expect(viewer.code).toBe(4);
  }, 120_000);

  it("candidate rerun refuses a check that cannot be rerun with the reason (exit 2) and checks its input", async () => {
    const refused = await run(["candidate", "rerun", REJECTED, "build"], as("member"));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("rejected before it had a Verification Plan");
    const bad = await run(["candidate", "rerun", REJECTED, "Bad Check!"], as("member"));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("checkId: a check id is 1 to 40 lower-case letters");
    expect(await t.db.checkRerun.count()).toBe(0);
    expect((await run(["candidate", "rerun", REJECTED, "build"], as("viewer"))).code).toBe(4);
  }, 120_000);

  it("policy show, set and history: an admin's file becomes v2; a stale or bad file and a member are refused", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rbt-cli-policy-"));
    const shown = await run(["policy", "show", SHOP, "--json"], as("viewer"));
    expect(shown.stderr).toBe("");
    expect(shown.code).toBe(0);
    const v1 = JSON.parse(shown.stdout);
    expect(v1).toMatchObject({ projectId: SHOP, policyId: "policy-1", version: 1, implicit: true });
    const human = await run(["policy", "show", SHOP], as("viewer"));
    expect(human.stdout).toContain(`policy-1 v1 of project ${SHOP} (the defaults; never edited)`);
    expect(human.stdout).toMatch(/^ {2}high +\(what the checks file applies\)$/m);
    expect(human.stdout).toContain("commands: the checks file's for every check");

    // The `show --json` output, edited, is the file `set` takes; it carries the version it was read at.
    const file = join(dir, "policy.json");
    await writeFile(file, JSON.stringify({ ...v1, document: { ...v1.document, rerunBudget: 4 } }));
    const member = await run(["policy", "set", SHOP, "--file", file], as("member"));
    expect(member.code).toBe(4);
    expect(member.stderr).toMatch(/^error: Requires the admin role or above in this tenant/);
    const set = await run(["policy", "set", SHOP, "--file", file], as("admin"));
    expect(set.stderr).toBe("");
    expect(set.code).toBe(0);
    expect(set.stdout.trim()).toBe(
      `policy-1 v2 of project ${SHOP} (was v1; changed rerunBudget); Candidates planned under v1 can no longer be promoted`,
    );
    const again = await run(["policy", "set", SHOP, "--file", file], as("admin"));
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("the policy is at version 2, not 1: another edit landed first");

    const bad = join(dir, "bad.json");
    await writeFile(
      bad,
      JSON.stringify({ ...v1.document, timeoutSeconds: { ...v1.document.timeoutSeconds, build: 0 } }),
    );
    const refused = await run(["policy", "set", SHOP, "--file", bad, "--expected-version", "2"], as("admin"));
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `error: ${bad} is not a valid policy: timeoutSeconds.build: Too small: expected number to be >=1; fix it and try again (nothing was sent)`,
    );
    expect(await t.db.projectPolicy.findMany({ where: { projectId: SHOP }, select: { version: true } })).toEqual([
      { version: 2 },
    ]);

    const history = await run(["policy", "history", SHOP], as("viewer"));
    expect(history.code).toBe(0);
    const lines = history.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^VERSION +SET BY +AT +CHANGED$/);
    expect(lines[1]).toMatch(/^v2 +usr_acme_admin +\d{4}-\d{2}-\d{2}T\S+ +rerunBudget$/);
    expect(lines[2]).toMatch(/^v1 +- +- +the defaults$/);
  }, 120_000);

  it("without a token exits 4 and says where to create one", async () => {
    const r = await run(["whoami"], { url: server.url });
    expect(r.code).toBe(4);
    expect(r.stderr.trim()).toBe(
      `error: no API token: set RHUMBATRON_TOKEN or pass --token; create one at ${server.url}/settings/tokens`,
    );
    const unknown = await run(["projects", "list"], { url: server.url, token: `rbt_${"x".repeat(43)}` });
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain("the token is missing, revoked or unknown; create one at");
  });

  it("exits 5 with 'service unavailable' when the server answers 503 (its database is down)", async () => {
    const closedDb = createDb("postgresql://postgres@127.0.0.1:1/rhumbatron");
    const degraded = await startApiServer(closedDb);
    try {
      for (const args of [["whoami"], ["--json", "projects", "list"]]) {
        const r = await run(args, { url: degraded.url, token: tokens.viewer });
        expect(r.code, r.stderr).toBe(5);
        expect(r.stdout).toBe("");
        const message = `service unavailable: the server at ${degraded.url} cannot serve requests now (the database cannot be reached; try again in a moment); if that lasts, check the server's log and that its database is running`;
        if (args[0] === "--json") {
          expect(JSON.parse(r.stderr)).toEqual({ error: { code: "UNAVAILABLE", message } });
        } else {
          expect(r.stderr.trim()).toBe(`error: ${message}`);
        }
      }
    } finally {
      await degraded.close();
      await closedDb.$disconnect();
    }
  });

  it("exits 5 when the server cannot be reached", async () => {
    const gone = await startApiServer(t.db);
    await gone.close();
    const r = await run(["whoami"], { url: gone.url, token: tokens.viewer });
    expect(r.code).toBe(5);
    expect(r.stderr.trim()).toBe(
      `error: cannot reach ${gone.url} (ECONNREFUSED); check --url or RHUMBATRON_URL and that the server is running (npm start)`,
    );
  });
  it("task transcript prints each run of a Task, newest first, with its program's steps, tokens and hosts", async () => {
    await t.db.change.create({
      data: { id: "chg_cli_tr", projectId: SHOP, title: "Greet", riskTier: "low", clientRequestId: "chg_cli_tr" },
    });
    await t.db.task.create({
      data: { id: "task_cli_tr", changeId: "chg_cli_tr", key: "greet", title: "greet", state: "failed" },
    });
    const key = sourceKeys.agentTranscript(SHOP, "run_cli_tr");
    await testServices().blobs.put(
      key,
      new TextEncoder().encode(
        JSON.stringify([
          { kind: "tool_call", name: "Read", input: '{"file_path":"greet.mjs"}' },
          { kind: "command", text: "node --test", exitCode: 1, output: "# fail 1" },
          { kind: "usage", inputTokens: 300, outputTokens: 40, costUsd: 0.0021 },
        ]),
      ),
    );
    const run0 = { taskId: "task_cli_tr", changeId: "chg_cli_tr", agentId: "agt_1", reason: "dispatch" };
    await t.db.agentRun.create({
      data: {
        ...run0,
        id: "run_cli_tr",
        wakeCommandId: "w_cli_tr",
        status: "failed",
        error: "codex exited 1; nothing was published",
        transcript: {
          key,
          program: "codex",
          version: "0.171.0",
          steps: 3,
          inputTokens: 300,
          outputTokens: 40,
          costUsd: 0.0021,
          reached: ["models.example.com:443"],
          refused: ["github.com:443"],
        },
      },
    });
    const r = await run(["task", "transcript", "task_cli_tr"], as("viewer"));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")).toEqual([
      "run run_cli_tr: failed, codex 0.171.0",
      "  codex exited 1; nothing was published",
      "  tokens 300 in, 40 out, $0.0021",
      "  reached models.example.com:443; refused github.com:443",
      '  called Read      {"file_path":"greet.mjs"}',
      "  ran (exit 1)     node --test",
      "  tokens           300 in, 40 out, $0.0021",
      "",
    ]);
    expect((await run(["task", "transcript", "task_nobody"], as("viewer"))).code).toBe(1);
  });

  it("task publish sends a fix by hand from files on disk, and refuses a bad path before sending anything", async () => {
    await t.db.change.create({
      data: {
        id: "chg_cli_fixture",
        projectId: SHOP,
        title: "Fix",
        riskTier: "low",
        clientRequestId: "chg_cli_fixture",
      },
    });
    await t.db.task.create({
      data: { id: "task_cli_fixture", changeId: "chg_cli_fixture", key: "a", title: "a", state: "ready" },
    });
    const dir = await mkdtemp(join(tmpdir(), "rhumbatron-cli-fixture-"));
    await writeFile(join(dir, "cart.js"), "export const total = 1;\n");
    await writeFile(join(dir, "elsewhere.txt"), "moved here\n");
    const args = ["task", "publish", "task_cli_fixture", "--summary", "Fix the total", "--from", dir];
    const files = ["--file", "cart.js", "--file", `docs/note.txt=${join(dir, "elsewhere.txt")}`, "--delete", "old.js"];

    const bad = await run([...args, "--file", `../up.txt=${join(dir, "cart.js")}`], as("member"));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("nothing was sent");
    expect(await t.db.queueMessage.count({ where: { commandType: "fixture.publish" } })).toBe(0);

    const sent = await run([...args, ...files, "--json"], as("member"));
    expect(sent.stderr).toBe("");
    expect(sent.code).toBe(0);
    const r = JSON.parse(sent.stdout);
    expect(r).toMatchObject({ changeId: "chg_cli_fixture", duplicate: false });
    const [message] = await t.db.queueMessage.findMany({ where: { commandType: "fixture.publish" } });
    expect((message?.envelope as { payload?: { files?: unknown } } | undefined)?.payload?.files).toEqual([
      { path: "cart.js", content: "export const total = 1;\n" },
      { path: "docs/note.txt", content: "moved here\n" },
      { path: "old.js", delete: true },
    ]);
    const again = await run([...args, ...files], as("member"));
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`sent before (the same fix): ChangeSet ${r.changeSetId}`);
    expect((await run([...args, ...files], as("viewer"))).code).toBe(4);
  }, 120_000);
});

describe("rhumbatron projects agent", () => {
  const shop = "proj_00000000-0000-4000-8000-00000000a001";

  it("sets the project's Agent for an admin and shows it; more or less than one choice is exit 1; below admin is exit 4", async () => {
    const set = await run(
      [
        ...["projects", "agent", shop, "--command", "--timeout", "300", "--secret", "DEPLOY_TOKEN"],
        ...["--", "sh", "tools/agent.sh", "--fast"],
      ],
      as("admin"),
    );
    expect(set.stderr).toBe("");
    expect(set.code).toBe(0);
    expect(set.stdout.trim()).toBe(`${shop}: agent command: sh tools/agent.sh --fast (300 s, secrets DEPLOY_TOKEN)`);
    expect((await t.db.project.findUniqueOrThrow({ where: { id: shop } })).agent).toEqual({
      kind: "command",
      argv: ["sh", "tools/agent.sh", "--fast"],
      timeoutSeconds: 300,
      allowOutsidePaths: false,
      secrets: ["DEPLOY_TOKEN"],
    });
    const show = await run(["projects", "show", shop], as("viewer"));
    expect(show.stdout).toContain("  agent       command: sh tools/agent.sh --fast (300 s, secrets DEPLOY_TOKEN)");

    const two = await run(["projects", "agent", shop, "--scripted", "--model"], as("admin"));
    expect(two.code).toBe(1);
    expect(two.stderr).toContain("give exactly one of --scripted, --model, --program, --command or --default");
    const program = await run(
      [
        "projects",
        "agent",
        shop,
        "--program",
        "codex",
        "--model-name",
        "gpt-5.5",
        "--endpoint",
        "https://models.example.com",
        "--key-secret",
        "OPENAI_KEY",
        "--max-tokens",
        "50000",
      ],
      as("admin"),
    );
    expect(program.stderr).toBe("");
    expect(program.stdout.trim()).toBe(
      `${shop}: agent codex: gpt-5.5 at https://models.example.com, key OPENAI_KEY (900 s, 50000 tokens)`,
    );
    const half = await run(["projects", "agent", shop, "--program", "codex", "--model-name", "gpt-5.5"], as("admin"));
    expect(half.code).toBe(1);
    expect(half.stderr).toContain("--program needs --model-name, --endpoint and --key-secret");
    const keyed = await run(
      [
        ...["projects", "agent", shop, "--program", "codex", "--model-name", "m", "--key-secret", "K"],
        ...["--endpoint", "https://user:pw@models.example.com"],
      ],
      as("admin"),
    );
    expect(keyed.code).toBe(1);
    expect(keyed.stderr).toContain("the model endpoint carries no credentials");
    const unknown = await run(
      [
        ...["projects", "agent", shop, "--program", "aider", "--model-name", "m", "--key-secret", "K"],
        ...["--endpoint", "https://models.example.com"],
      ],
      as("admin"),
    );
    expect(unknown.code).toBe(1);
    const path = await run(["projects", "agent", shop, "--command", "--", "/bin/sh"], as("admin"));
    expect(path.code).toBe(1);
    expect(path.stderr).toContain("a bare program name on the Sandbox's PATH");
    expect((await run(["projects", "agent", shop, "--scripted"], as("member"))).code).toBe(4);

    const back = await run(["projects", "agent", shop, "--default"], as("admin"));
    expect(back.stdout.trim()).toBe(`${shop}: agent the worker's default`);
    expect((await t.db.project.findUniqueOrThrow({ where: { id: shop } })).agent).toBeNull();
  });
});

describe("rhumbatron secrets (docs/agents.md, Secrets)", () => {
  const auth = () => testServices().credentialSecret;
  const read = (name: string) => readTenantSecrets(t.db, ACME.tenantId, [name], auth());

  it("set takes the value from standard input or from an environment variable, never a flag, and never prints it", async () => {
    const value = `sk-cli-${Date.now().toString(36)}-stdin-value`;
    const piped = await run(["secrets", "set", "CLI_KEY", "--value-stdin"], { ...as("admin"), input: `${value}\n` });
    expect(piped.stderr).toBe("");
    expect(piped.code).toBe(0);
    expect(piped.stdout.trim()).toBe("set CLI_KEY; runs started from now on get it as $CLI_KEY");
    expect(await read("CLI_KEY")).toEqual({ CLI_KEY: value });

    const replaced = `${value}-from-env`;
    const fromEnv = await run(["secrets", "set", "CLI_KEY", "--from-env", "MY_KEY"], {
      ...as("admin"),
      env: { MY_KEY: replaced },
    });
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stdout.trim()).toBe("replaced CLI_KEY; runs started from now on get it as $CLI_KEY");
    expect(await read("CLI_KEY")).toEqual({ CLI_KEY: replaced });

    const list = await run(["secrets", "list"], as("admin"));
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^CLI_KEY +\d{4}-\d\d-\d\dT\S+ +admin@acme\.test$/m);
    const json = await run(["--json", "secrets", "list"], as("admin"));
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ name: "CLI_KEY" })]);
    for (const r of [piped, fromEnv, list, json]) {
      expect(r.stdout + r.stderr).not.toContain(value);
    }

    // A value as an argument or a flag is refused before anything is sent; so is no value, or both ways.
    const refused = [
      await run(["secrets", "set", "CLI_KEY", "sk-as-an-argument"], as("admin")),
      await run(["secrets", "set", "CLI_KEY", "--value", "sk-as-a-flag"], as("admin")),
      await run(["secrets", "set", "CLI_KEY"], as("admin")),
      await run(["secrets", "set", "CLI_KEY", "--value-stdin", "--from-env", "MY_KEY"], {
        ...as("admin"),
        input: "sk-both",
        env: { MY_KEY: "sk-both" },
      }),
      await run(["secrets", "set", "CLI_KEY", "--from-env", "UNSET_VAR"], as("admin")),
      await run(["secrets", "set", "CLI_KEY", "--value-stdin"], { ...as("admin"), input: "" }),
      await run(["secrets", "set", "lower-case", "--value-stdin"], { ...as("admin"), input: "sk-bad-name" }),
    ];
    for (const r of refused) {
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).not.toMatch(/sk-/);
    }
    expect(refused[2]?.stderr).toContain("--value-stdin");
    expect(refused[4]?.stderr).toContain("UNSET_VAR is not set");
    expect(await read("CLI_KEY")).toEqual({ CLI_KEY: replaced });
  });

  it("below admin is exit 4; delete removes a secret, and deleting it again is exit 1", async () => {
    const member = await run(["secrets", "set", "MEMBER_KEY", "--value-stdin"], { ...as("member"), input: "sk-x" });
    expect(member.code).toBe(4);
    expect((await run(["secrets", "list"], as("approver"))).code).toBe(4);
    expect(await t.db.tenantSecret.count({ where: { name: "MEMBER_KEY" } })).toBe(0);

    await run(["secrets", "set", "DOOMED_KEY", "--value-stdin"], { ...as("admin"), input: "sk-doomed-value" });
    const deleted = await run(["secrets", "delete", "DOOMED_KEY"], as("admin"));
    expect(deleted.code).toBe(0);
    expect(deleted.stdout.trim()).toBe("deleted DOOMED_KEY");
    expect(await t.db.tenantSecret.count({ where: { name: "DOOMED_KEY" } })).toBe(0);
    const again = await run(["secrets", "delete", "DOOMED_KEY"], as("admin"));
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("no secret DOOMED_KEY");
  });
});
