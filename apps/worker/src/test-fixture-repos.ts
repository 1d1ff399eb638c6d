import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Test and bench support only: the two open-source repositories vendored in fixtures/ (their origin
 * and licences in fixtures/README.md) as a team would bring them to Rhumbatron, each with the one
 * thing such a team adds, a checks file (and, for npm, the .npmrc naming its registry). Used by
 * verification/fixture-repos.test.ts and `npm run bench -- import`.
 */
export const FIXTURES = fileURLToPath(new URL("../../../fixtures/", import.meta.url));

/** Every file under `dir` (relative path -> bytes). */
export function filesOf(dir: string): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = readFileSync(p);
    }
  };
  walk(dir);
  return out;
}

/** The npm tarballs a local registry must serve for the JavaScript fixture's lockfile. */
export const registryTarballs = () => readdirSync(join(FIXTURES, "registry")).map((f) => join(FIXTURES, "registry", f));

export interface FixtureRepo {
  name: string;
  files: Record<string, string | Uint8Array>;
  /** The setup commands and the check's command, as the checks file gives them (for a host baseline). */
  setup: string[][];
  check: string[];
  /** How many tests its suite runs. */
  tests: number;
}

/** @fastify/proxy-addr: npm dependencies from the registry at `registryUrl` (its host allowed in setup). */
export function jsLib(registryUrl: string): FixtureRepo {
  const host = new URL(registryUrl).host;
  const install = ["npm", "ci", "--no-audit", "--no-fund"];
  return {
    name: "@fastify/proxy-addr",
    files: {
      ...filesOf(join(FIXTURES, "js-lib")),
      ".npmrc": `registry=${registryUrl}\n`,
      ".rhumbatron/checks.yml": [
        "version: 1",
        "requires: [node>=20]",
        `registries: ["${host}"]`,
        "setup:",
        "  - id: install",
        `    run: [${install.join(", ")}]`,
        "    cache: [node_modules]",
        "    key: [package-lock.json]",
        "    timeout: 300",
        "checks:",
        "  - id: test",
        "    run: [npm, test]",
        "    report: { format: junit, path: report.xml }",
        "    timeout: 300",
        "",
      ].join("\n"),
    },
    setup: [install],
    check: ["npm", "test"],
    tests: 78,
  };
}

/**
 * inflection: Debian's pytest, carried in the repository as .deb files and unpacked by its setup
 * step; `python3 -S` keeps the host's site-packages (and any pytest of its own) out.
 */
export function pyLib(): FixtureRepo {
  const debs = Object.fromEntries(
    readdirSync(join(FIXTURES, "debian")).map((f) => [`.deps/debian/${f}`, readFileSync(join(FIXTURES, "debian", f))]),
  );
  const unpack =
    "import glob, subprocess; [subprocess.run(['dpkg-deb', '-x', d, '.deps/root'], check=True) for d in sorted(glob.glob('.deps/debian/*.deb'))]";
  const run =
    "import sys; sys.path.insert(0, '.deps/root/usr/lib/python3/dist-packages'); import pytest; sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '--junitxml=report.xml']))";
  return {
    name: "inflection",
    files: {
      ...filesOf(join(FIXTURES, "py-lib")),
      ...debs,
      ".rhumbatron/checks.yml": [
        "version: 1",
        "requires: [python3, dpkg-deb]",
        "setup:",
        "  - id: pytest",
        `    run: [python3, -S, -c, "${unpack}"]`,
        "    cache: [.deps/root]",
        "    key: [.deps/debian/python3-pytest_7.2.1-2_all.deb, .deps/debian/python3-pluggy_1.0.0+repack-1_all.deb]",
        "    timeout: 120",
        "checks:",
        "  - id: pytest",
        `    run: [python3, -S, -c, "${run}"]`,
        "    report: { format: junit, path: report.xml }",
        "    timeout: 300",
        "",
      ].join("\n"),
    },
    setup: [["python3", "-S", "-c", unpack]],
    check: ["python3", "-S", "-c", run],
    tests: 450,
  };
}
