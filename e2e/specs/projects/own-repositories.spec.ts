import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type APIRequestContext, expect, test } from "@playwright/test";
import {
  type FixtureRepo,
  jsLib,
  type LocalRegistry,
  pyLib,
  registryTarballs,
  startLocalRegistry,
} from "@rhumbatron/fixtures";
import { DEMO_TENANT, trpcData, trpcMutation } from "../../support/trpc.ts";

/**
 * Two open-source repositories nobody here wrote (fixtures/README.md), brought the way a team brings
 * its own (README: Bring your repository): committed with command-line git, imported with the real
 * `rhumbatron` CLI into the running product (web and worker as processes), then changed by the
 * scripted Agent through `rhumbatron change create`. A Change that keeps its suite green is verified
 * and lands by itself; one that breaks a test is rejected, and `candidate show` names the test. The
 * npm library's dependencies come through its setup step from a real Verdaccio on 127.0.0.1 (no
 * uplinks), and the second Candidate's setup is restored from the setup cache.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const CLI = join(ROOT, "packages/sdk/bin/rhumbatron.js");
/** Import, then two verifications with setup and a whole suite each, on a busy two-core machine. */
const LIMIT = 600_000;

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

let registry: LocalRegistry;
let token = "";
let baseURL = "";

test.beforeAll(async () => {
  test.setTimeout(180_000);
  registry = await startLocalRegistry({
    dir: await mkdtemp(join(tmpdir(), "rh-e2e-registry-")),
    tarballs: registryTarballs(),
  });
});

/** An admin's API token for the CLI, made as a person makes one (tokens.create while signed in). */
async function adminToken(api: APIRequestContext): Promise<void> {
  baseURL = String(test.info().project.use.baseURL);
  const created = await trpcData<{ secret: string }>(
    await trpcMutation(api, "tokens.create", {
      tenantId: DEMO_TENANT,
      name: `own-repositories-${randomBytes(3).toString("hex")}`,
      role: "admin",
    }),
  );
  token = created.secret;
}

test.afterAll(async () => {
  await registry?.stop();
});

/** The real CLI as a process, with the product's address and the token from the environment. */
async function cli(...args: string[]): Promise<CliRun> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RHUMBATRON_")));
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], {
      env: { ...env, RHUMBATRON_URL: baseURL, RHUMBATRON_TOKEN: token },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

async function cliJson<T>(...args: string[]): Promise<T> {
  const r = await cli("--json", ...args);
  expect(r.code, `rhumbatron ${args.join(" ")}: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as T;
}

const git = async (cwd: string, ...args: string[]) =>
  (
    await promisify(execFile)("git", ["-c", "user.name=Ada", "-c", "user.email=ada@example.com", ...args], {
      cwd,
      env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    })
  ).stdout.trim();

/** The fixture as a team's repository on this host: its files, and one commit on main. */
async function repositoryOf(repo: FixtureRepo): Promise<{ dir: string; head: string }> {
  const dir = await mkdtemp(join(tmpdir(), "rh-e2e-own-"));
  for (const [path, content] of Object.entries(repo.files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  await git(dir, "init", "-q", "-b", "main");
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", `${repo.name} as published`);
  return { dir, head: await git(dir, "rev-parse", "HEAD") };
}

interface ProjectDetail {
  status: string;
  canonicalGeneration: number;
  failureReason: string | null;
}

/** `rhumbatron projects import`, then `projects show` until the worker has imported it. */
async function importWithCli(name: string, dir: string): Promise<string> {
  const { projectId } = await cliJson<{ projectId: string }>("projects", "import", name, "--from", dir);
  await expect
    .poll(async () => (await cliJson<ProjectDetail>("projects", "show", projectId)).status, { timeout: 120_000 })
    .toBe("active");
  return projectId;
}

interface Evidence {
  checkId: string;
  kind: string;
  status: string;
  detail: string;
  metrics: Record<string, number>;
}
interface CandidateView {
  id: string;
  status: string;
  evidence: Evidence[];
}
interface WatchEnd {
  outcome: string;
  candidate: { id: string; status: string } | null;
}

/** `change create` from a Work Graph file, then `change watch` until its Candidate is final. */
async function changeWithCli(
  projectId: string,
  title: string,
  editPlan: unknown[],
  land: boolean,
): Promise<{ watch: CliRun; end: WatchEnd }> {
  const dir = await mkdtemp(join(tmpdir(), "rh-e2e-change-"));
  const file = join(dir, "change.json");
  await writeFile(file, JSON.stringify({ title, riskTier: "low", tasks: [{ key: "a", title, editPlan }] }));
  const created = await cliJson<{ changeId: string }>(
    "change",
    "create",
    "--project",
    projectId,
    "--file",
    file,
    ...(land ? ["--land"] : []),
  );
  await rm(dir, { recursive: true, force: true });
  const watch = await cli("--json", "change", "watch", created.changeId, "--interval", "500");
  const lines = watch.stdout.trim().split("\n");
  return { watch, end: JSON.parse(lines[lines.length - 1] ?? "{}") as WatchEnd };
}

const setupOf = (c: CandidateView, id: string) => c.evidence.find((e) => e.checkId === id && e.kind === "setup");

test("an npm library with dependencies, through the CLI: a green Change lands, a breaking one is rejected naming the test, the second install is a cache hit", async ({
  page,
}) => {
  test.setTimeout(LIMIT);
  await adminToken(page.request);
  const repo = jsLib(registry.url);
  const source = await repositoryOf(repo);
  const projectId = await importWithCli(`proxy-addr-${randomBytes(3).toString("hex")}`, source.dir);

  await test.step("a Change that keeps the suite green is verified, with every test counted, and lands", async () => {
    const { watch, end } = await changeWithCli(
      projectId,
      "Note how the library is used here",
      [{ op: "write", path: "docs/USAGE.md", content: "Used behind our proxy.\n" }],
      true,
    );
    expect(watch.code, watch.stderr).toBe(0);
    const candidateId = end.candidate?.id ?? "";
    const c = await cliJson<CandidateView>("candidate", "show", candidateId);
    const install = setupOf(c, "setup-install");
    expect(install, "the install ran in setup").toMatchObject({ status: "pass", metrics: { cacheHit: 0 } });
    expect(c.evidence.find((e) => e.checkId === "test")).toMatchObject({
      status: "pass",
      detail: `${repo.tests} passed, 0 skipped, 0 failed`,
    });
    await expect
      .poll(async () => (await cliJson<ProjectDetail>("projects", "show", projectId)).canonicalGeneration, {
        timeout: 120_000,
      })
      .toBe(1);
    expect((await cliJson<CandidateView>("candidate", "show", candidateId)).status).toBe("promoted");
  });

  await test.step("a Change that breaks a test is rejected; candidate show names the test, and setup came from the cache", async () => {
    const { watch, end } = await changeWithCli(
      projectId,
      "Stop trusting IPv6 link-local addresses",
      [
        {
          op: "replace",
          path: "index.js",
          find: "linklocal: ['169.254.0.0/16', 'fe80::/10'],",
          replace: "linklocal: ['169.254.0.0/16'],",
        },
      ],
      false,
    );
    expect(watch.code, "a rejected Candidate is exit 2").toBe(2);
    expect(end.outcome).toBe("rejected");
    const candidateId = end.candidate?.id ?? "";
    const shown = await cli("candidate", "show", candidateId);
    expect(shown.stdout).toContain("should accept single pre-defined name");
    const c = await cliJson<CandidateView>("candidate", "show", candidateId);
    const install = setupOf(c, "setup-install");
    expect(install?.metrics.cacheHit, "the second Candidate's install is restored from the setup cache").toBe(1);
    expect(install?.detail).toContain("the command did not run");
  });
});

test("a Python package tested with Debian's pytest, through the CLI: a green Change lands, a breaking one is rejected naming the test", async ({
  page,
}) => {
  test.setTimeout(LIMIT);
  await adminToken(page.request);
  const repo = pyLib();
  const source = await repositoryOf(repo);
  const projectId = await importWithCli(`inflection-${randomBytes(3).toString("hex")}`, source.dir);

  await test.step("a green Change is verified with every pytest test counted, and lands", async () => {
    const { watch, end } = await changeWithCli(
      projectId,
      "Say where the package comes from",
      [{ op: "write", path: "NOTES.md", content: "Vendored from PyPI's inflection 0.3.1.\n" }],
      true,
    );
    expect(watch.code, watch.stderr).toBe(0);
    const c = await cliJson<CandidateView>("candidate", "show", end.candidate?.id ?? "");
    expect(c.evidence.find((e) => e.checkId === "pytest" && e.kind !== "setup")).toMatchObject({
      status: "pass",
      detail: `${repo.tests} passed, 0 skipped, 0 failed`,
    });
    await expect
      .poll(async () => (await cliJson<ProjectDetail>("projects", "show", projectId)).canonicalGeneration, {
        timeout: 120_000,
      })
      .toBe(1);
  });

  await test.step("a Change that breaks underscore() is rejected with the failing tests named", async () => {
    const { watch, end } = await changeWithCli(
      projectId,
      "Make underscore a no-op",
      [
        {
          op: "replace",
          path: "inflection.py",
          find: "def underscore(word):",
          replace: "def underscore(word):\n    return word\n\ndef _old_underscore(word):",
        },
      ],
      false,
    );
    expect(watch.code).toBe(2);
    const shown = await cli("candidate", "show", end.candidate?.id ?? "");
    expect(shown.stdout).toMatch(/failing: .*underscore/);
    const c = await cliJson<CandidateView>("candidate", "show", end.candidate?.id ?? "");
    expect(setupOf(c, "setup-pytest")?.metrics.cacheHit).toBe(1);
  });
});
