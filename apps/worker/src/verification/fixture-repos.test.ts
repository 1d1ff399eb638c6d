import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getCandidate } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { FIXTURES, jsLib, type LocalRegistry, pyLib, registryTarballs, startLocalRegistry } from "@rhumbatron/fixtures";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { candidateFor, importedProject, type TestWorld, testWorld, verificationDeps } from "../test-world.ts";
import { drainVerifications } from "./runner.ts";

/**
 * Two open-source repositories nobody here wrote (fixtures/README.md), imported and verified with
 * their own test suites through the real workflow, Sandbox (bubblewrap) and git: a library with npm
 * dependencies, installed by its setup step from a real Verdaccio on 127.0.0.1 through the registry
 * proxy (nothing else reachable), then cached; and a Python package tested by Debian's pytest,
 * which its setup step unpacks from the .deb files the repository carries. The only thing added to
 * each is what a team adds to bring its repository: a checks file (and, for npm, its .npmrc).
 */
const t = useTestDatabase();

const note = (requestId: string, path = "NOTES.md") => ({
  requestId,
  tasks: [{ key: "a", editPlan: [{ op: "write" as const, path, content: `${requestId}\n` }] }],
});
const view = (w: TestWorld, candidateId: string) => getCandidate(t.db, { tenantId: "ten_a", candidateId }, w.config);
const verify = (w: TestWorld) => drainVerifications(verificationDeps(w));

let registry: LocalRegistry;
beforeAll(async () => {
  registry = await startLocalRegistry({
    dir: mkdtempSync(join(tmpdir(), "rh-fixture-registry-")),
    tarballs: registryTarballs(),
  });
}, 120_000);
afterAll(async () => {
  await registry?.stop();
});

describe("@fastify/proxy-addr, a library with npm dependencies and its own node:test suite", () => {
  it("installs through setup from the allowed registry only, verifies a green Change, rejects a breaking one naming the test, and the second install is a cache hit", async () => {
    const w = await testWorld(t.db);
    const host = new URL(registry.url).host;
    const repo = jsLib(registry.url);
    const projectId = await importedProject(w, repo.files);

    const green = await candidateFor(w, projectId, note("docs-only", "docs/NOTE.md"));
    expect((await verify(w))[0]).toMatchObject({ candidateId: green.candidateId, outcome: "verified" });
    const g = await view(w, green.candidateId);
    const install = g.evidence.find((e) => e.checkId === "setup-install");
    expect(install).toMatchObject({ status: "pass", metrics: { cacheHit: 0, exitCode: 0 } });
    expect(install?.detail).toMatch(/^prepared; saved to the setup cache \(key [0-9a-f]{12}\): node_modules$/);
    const log = new TextDecoder().decode((await w.blobs.get(install?.outputKey ?? ""))?.body);
    expect(log).toContain(`[network] allowed: ${host}; reached: ${host}; refused: none`);
    expect(g.evidence.find((e) => e.checkId === "test")).toMatchObject({
      status: "pass",
      coverage: "checked_supported",
      detail: `${repo.tests} passed, 0 skipped, 0 failed`,
    });

    const breaking = await candidateFor(w, projectId, {
      requestId: "no-ipv6-link-local",
      tasks: [
        {
          key: "a",
          editPlan: [
            {
              op: "replace",
              path: "index.js",
              find: "linklocal: ['169.254.0.0/16', 'fe80::/10'],",
              replace: "linklocal: ['169.254.0.0/16'],",
            },
          ],
        },
      ],
    });
    expect((await verify(w))[0]).toMatchObject({ candidateId: breaking.candidateId, outcome: "rejected" });
    const b = await view(w, breaking.candidateId);
    const hit = b.evidence.find((e) => e.checkId === "setup-install");
    expect(hit).toMatchObject({ status: "pass", metrics: { cacheHit: 1 }, outputKey: null });
    expect(hit?.detail).toMatch(
      /^restored from the setup cache \(key [0-9a-f]{12}\): node_modules; the command did not run$/,
    );
    const gap = b.gaps.find((x) => x.checkId === "test");
    expect(gap?.gap).toBe("failed");
    expect(gap?.detail).toMatch(/failing: .*should accept single pre-defined name/);
    const tests = (b.evidence.find((e) => e.checkId === "test")?.tests ?? []) as { status: string; name: string }[];
    const failing = tests.filter((x) => x.status === "failed");
    expect(failing.length).toBeGreaterThan(0);
    expect(failing.map((x) => x.name)).toContain("when given predefined names should accept single pre-defined name");
  }, 400_000);
});

describe("inflection, a Python package tested with pytest", () => {
  it("unpacks Debian's pytest in setup, verifies a green Change with every test counted, and rejects a breaking one", async () => {
    const w = await testWorld(t.db);
    const repo = pyLib();
    const projectId = await importedProject(w, repo.files);
    const green = await candidateFor(w, projectId, note("py-docs"));
    expect((await verify(w))[0]).toMatchObject({ candidateId: green.candidateId, outcome: "verified" });
    const g = await view(w, green.candidateId);
    expect(g.evidence.find((e) => e.checkId === "pytest" && e.kind !== "setup")).toMatchObject({
      status: "pass",
      detail: `${repo.tests} passed, 0 skipped, 0 failed`,
    });

    const breaking = await candidateFor(w, projectId, {
      requestId: "py-break",
      tasks: [
        {
          key: "a",
          editPlan: [
            {
              op: "replace",
              path: "inflection.py",
              find: "def underscore(word):",
              replace: "def underscore(word):\n    return word\n\ndef _old_underscore(word):",
            },
          ],
        },
      ],
    });
    expect((await verify(w))[0]).toMatchObject({ candidateId: breaking.candidateId, outcome: "rejected" });
    const b = await view(w, breaking.candidateId);
    expect(b.evidence.find((e) => e.checkId === "setup-pytest")?.metrics).toMatchObject({ cacheHit: 1 });
    const gap = b.gaps.find((x) => x.checkId === "pytest");
    expect(gap?.gap).toBe("failed");
    expect(gap?.detail).toMatch(/failing: .*underscore/);
  }, 400_000);
});

describe("a repository with no checks file", () => {
  it("detects an npm install that reaches the registry its .npmrc names, and its tests run on what it installed", async () => {
    const w = await testWorld(t.db);
    const lock = JSON.parse(readFileSync(join(FIXTURES, "js-lib", "package-lock.json"), "utf8")) as {
      packages: Record<string, unknown>;
    };
    const manifest = {
      name: "uses-ipaddr",
      version: "1.0.0",
      scripts: { test: "node --test" },
      dependencies: { "ipaddr.js": "2.5.0" },
    };
    const projectId = await importedProject(w, {
      "package.json": JSON.stringify(manifest, null, 2),
      // The lockfile names registry.npmjs.org, as a team's does; npm fetches from the .npmrc's registry instead.
      "package-lock.json": JSON.stringify({
        name: "uses-ipaddr",
        version: "1.0.0",
        lockfileVersion: 3,
        requires: true,
        packages: {
          "": { name: "uses-ipaddr", version: "1.0.0", dependencies: { "ipaddr.js": "2.5.0" } },
          "node_modules/ipaddr.js": lock.packages["node_modules/ipaddr.js"],
        },
      }),
      ".npmrc": `registry=${registry.url}\n`,
      "test/parse.test.js": [
        'const { test } = require("node:test");',
        'const assert = require("node:assert");',
        'const ipaddr = require("ipaddr.js");',
        'test("parses a loopback address", () => assert.equal(ipaddr.parse("127.0.0.1").range(), "loopback"));',
        "",
      ].join("\n"),
    });
    const c = await candidateFor(w, projectId, note("detected-install"));
    expect((await verify(w))[0]).toMatchObject({ candidateId: c.candidateId, outcome: "verified" });
    const v = await view(w, c.candidateId);
    const host = new URL(registry.url).host;
    const install = v.evidence.find((e) => e.checkId === "setup-install");
    expect(install).toMatchObject({ status: "pass", metrics: { exitCode: 0 } });
    const log = new TextDecoder().decode((await w.blobs.get(install?.outputKey ?? ""))?.body);
    expect(log).toContain(`[network] allowed: ${host}; reached: ${host}; refused: none`);
    expect(v.evidence.find((e) => e.checkId === "test")).toMatchObject({ status: "pass" });
  }, 300_000);
});
