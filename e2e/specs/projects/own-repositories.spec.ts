import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import {
  type FixtureRepo,
  jsLib,
  type LocalRegistry,
  pyLib,
  registryTarballs,
  startLocalRegistry,
} from "@rhumbatron/fixtures";
import {
  type Cli,
  changeWithCli,
  cliAsAdmin,
  generationReaches,
  importWithCli,
  repositoryOf,
} from "../../support/cli.ts";

/**
 * Two open-source repositories nobody here wrote (fixtures/README.md), brought the way a team brings
 * its own (docs/repositories.md): committed with command-line git, imported with the real
 * `rhumbatron` CLI into the running product (web and worker as processes), then changed by the
 * scripted Agent through `rhumbatron change create`. A Change that keeps its suite green is verified
 * and lands by itself; one that breaks a test is rejected, and `candidate show` names the test. The
 * npm library's dependencies come through its setup step from a real Verdaccio on 127.0.0.1 (no
 * uplinks), and the second Candidate's setup is restored from the setup cache.
 */

/** Import, then two verifications with setup and a whole suite each, on a busy two-core machine. */
const LIMIT = 600_000;

let registry: LocalRegistry;

test.beforeAll(async () => {
  test.setTimeout(180_000);
  registry = await startLocalRegistry({
    dir: await mkdtemp(join(tmpdir(), "rh-e2e-registry-")),
    tarballs: registryTarballs(),
  });
});

test.afterAll(async () => {
  await registry?.stop();
});

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

/** A one-Task Change made by the scripted Agent replaying `editPlan`. */
const oneTask = (title: string, editPlan: unknown[]) => ({
  title,
  riskTier: "low",
  tasks: [{ key: "a", title, editPlan }],
});

const imported = async (cli: Cli, repo: FixtureRepo, name: string) =>
  importWithCli(
    cli,
    `${name}-${randomBytes(3).toString("hex")}`,
    (await repositoryOf(repo.files, `${repo.name} as published`)).dir,
  );

const setupOf = (c: CandidateView, id: string) => c.evidence.find((e) => e.checkId === id && e.kind === "setup");

test("an npm library with dependencies, through the CLI: a green Change lands, a breaking one is rejected naming the test, the second install is a cache hit", async ({
  page,
}) => {
  test.setTimeout(LIMIT);
  const cli = await cliAsAdmin(page.request);
  const repo = jsLib(registry.url);
  const projectId = await imported(cli, repo, "proxy-addr");

  await test.step("a Change that keeps the suite green is verified, with every test counted, and lands", async () => {
    const { watch, end } = await changeWithCli(
      cli,
      projectId,
      oneTask("Note how the library is used here", [
        { op: "write", path: "docs/USAGE.md", content: "Used behind our proxy.\n" },
      ]),
      true,
    );
    expect(watch.code, watch.stderr).toBe(0);
    const candidateId = end.candidate?.id ?? "";
    const c = await cli.json<CandidateView>("candidate", "show", candidateId);
    const install = setupOf(c, "setup-install");
    expect(install, "the install ran in setup").toMatchObject({ status: "pass", metrics: { cacheHit: 0 } });
    expect(c.evidence.find((e) => e.checkId === "test")).toMatchObject({
      status: "pass",
      detail: `${repo.tests} passed, 0 skipped, 0 failed`,
    });
    await generationReaches(cli, projectId, 1);
    expect((await cli.json<CandidateView>("candidate", "show", candidateId)).status).toBe("promoted");
  });

  await test.step("a Change that breaks a test is rejected; candidate show names the test, and setup came from the cache", async () => {
    const { watch, end } = await changeWithCli(
      cli,
      projectId,
      oneTask("Stop trusting IPv6 link-local addresses", [
        {
          op: "replace",
          path: "index.js",
          find: "linklocal: ['169.254.0.0/16', 'fe80::/10'],",
          replace: "linklocal: ['169.254.0.0/16'],",
        },
      ]),
      false,
    );
    expect(watch.code, "a rejected Candidate is exit 2").toBe(2);
    expect(end.outcome).toBe("rejected");
    const candidateId = end.candidate?.id ?? "";
    const shown = await cli.run("candidate", "show", candidateId);
    expect(shown.stdout).toContain("should accept single pre-defined name");
    const c = await cli.json<CandidateView>("candidate", "show", candidateId);
    const install = setupOf(c, "setup-install");
    expect(install?.metrics.cacheHit, "the second Candidate's install is restored from the setup cache").toBe(1);
    expect(install?.detail).toContain("the command did not run");
  });
});

test("a Python package tested with Debian's pytest, through the CLI: a green Change lands, a breaking one is rejected naming the test", async ({
  page,
}) => {
  test.setTimeout(LIMIT);
  const cli = await cliAsAdmin(page.request);
  const repo = pyLib();
  const projectId = await imported(cli, repo, "inflection");

  await test.step("a green Change is verified with every pytest test counted, and lands", async () => {
    const { watch, end } = await changeWithCli(
      cli,
      projectId,
      oneTask("Say where the package comes from", [
        { op: "write", path: "NOTES.md", content: "Vendored from PyPI's inflection 0.3.1.\n" },
      ]),
      true,
    );
    expect(watch.code, watch.stderr).toBe(0);
    const c = await cli.json<CandidateView>("candidate", "show", end.candidate?.id ?? "");
    expect(c.evidence.find((e) => e.checkId === "pytest" && e.kind !== "setup")).toMatchObject({
      status: "pass",
      detail: `${repo.tests} passed, 0 skipped, 0 failed`,
    });
    await generationReaches(cli, projectId, 1);
  });

  await test.step("a Change that breaks underscore() is rejected with the failing tests named", async () => {
    const { watch, end } = await changeWithCli(
      cli,
      projectId,
      oneTask("Make underscore a no-op", [
        {
          op: "replace",
          path: "inflection.py",
          find: "def underscore(word):",
          replace: "def underscore(word):\n    return word\n\ndef _old_underscore(word):",
        },
      ]),
      false,
    );
    expect(watch.code).toBe(2);
    const shown = await cli.run("candidate", "show", end.candidate?.id ?? "");
    expect(shown.stdout).toMatch(/failing: .*underscore/);
    const c = await cli.json<CandidateView>("candidate", "show", end.candidate?.id ?? "");
    expect(setupOf(c, "setup-pytest")?.metrics.cacheHit).toBe(1);
  });
});
