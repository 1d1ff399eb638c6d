import {
  type Finding,
  list,
  NPM_PLACEHOLDER_TEST,
  type Proposed,
  plural,
  REPORTS,
  type Read,
  record,
  SIMPLE_NODE_RANGE,
  TIMEOUT,
} from "./detect-shared.ts";

/**
 * Node: the root package.json's own scripts. build (prepares the tree), test (a JUnit report when
 * vitest is there to give one), lint (medium risk and up, or always when it is the only check), the
 * Node version from engines, and the install its lockfile names. A package.json that does not parse
 * is not a Node project we can speak for: it is ignored (the reason says so), never thrown.
 */
export async function detectNode(paths: ReadonlySet<string>, read: Read): Promise<Finding | null> {
  if (!paths.has("package.json")) return null;
  const text = await read("package.json");
  let pkg: Record<string, unknown> | null = null;
  try {
    pkg = text === null ? null : record(JSON.parse(text));
  } catch {
    pkg = null;
  }
  if (!pkg) return { from: [], requires: [], setup: [], checks: [], reasons: ["package.json does not parse: ignored"] };

  const scripts = record(pkg.scripts) ?? {};
  const deps = { ...record(pkg.dependencies), ...record(pkg.devDependencies) };
  const { checks, reasons, used } = scriptChecks(scripts, (name: string) => Object.hasOwn(deps, name));
  if (checks.length === 0) return { from: [], requires: [], setup: [], checks: [], reasons };
  reasons.unshift(`package.json has ${plural("script", used)} ${list(used)}`);

  const node = nodeRequirement(record(pkg.engines), reasons);

  const from = ["package.json"];
  const { setup, registries } = await installStep(paths, read, deps, from, reasons);
  return { from, requires: [node], setup, checks, reasons, ...(registries ? { registries: registries.hosts } : {}) };
}

/** The checks package.json's build, test and lint scripts give, what they rest on, and which scripts were used. */
function scriptChecks(
  scripts: Record<string, unknown>,
  hasDep: (name: string) => boolean,
): { checks: Proposed[]; reasons: string[]; used: string[] } {
  const script = (name: string) => {
    const s = scripts[name];
    return typeof s === "string" && s.trim() ? s.trim() : null;
  };
  const checks: Proposed[] = [];
  const reasons: string[] = [];
  const used: string[] = [];

  const build = script("build");
  if (build) {
    used.push("build");
    checks.push({
      ids: ["build", "npm-build"],
      check: { run: ["npm", "run", "-s", "build"], timeout: TIMEOUT.build, prepares: true },
      why: `package.json's build script (${build}); the tree it leaves is where the other checks start.`,
    });
  }

  const test = script("test");
  if (test && NPM_PLACEHOLDER_TEST.test(test))
    reasons.push("package.json's test script is npm's placeholder: no test check");
  else if (test) {
    used.push("test");
    checks.push(testCheck(test, hasDep, reasons));
  }

  const lint = script("lint");
  if (lint) {
    used.push("lint");
    const alone = checks.length === 0;
    checks.push({
      ids: ["lint", "npm-lint"],
      check: alone
        ? { run: ["npm", "run", "-s", "lint"], timeout: TIMEOUT.lint }
        : {
            run: ["npm", "run", "-s", "lint"],
            timeout: TIMEOUT.lint,
            when: [{ tiers: ["medium", "high", "critical"] }],
          },
      why: alone
        ? `package.json's lint script (${lint}); it is the only check found, so it applies to every Candidate.`
        : `package.json's lint script (${lint}), for Changes of medium risk and up.`,
    });
  }
  return { checks, reasons, used };
}

/** The test check for package.json's test script: vitest run directly for its JUnit report, else jest, else npm test. */
function testCheck(test: string, hasDep: (name: string) => boolean, reasons: string[]): Proposed {
  const report = `${REPORTS}/test.xml`;
  if (hasDep("vitest")) {
    reasons.push("package.json has vitest: test with a JUnit report");
    return {
      ids: ["test", "npm-test"],
      check: {
        run: ["npx", "vitest", "run", "--reporter=junit", `--outputFile=${report}`],
        timeout: TIMEOUT.test,
        report: { format: "junit", path: report },
        related: ["npx", "vitest", "related", "--run", "--reporter=junit", `--outputFile=${report}`, "{files}"],
        only: ["npx", "vitest", "run", "--reporter=junit", `--outputFile=${report}`, "-t", "{pattern}"],
      },
      why: `package.json's test script is ${test}; vitest is run directly so it writes a JUnit report, and passing needs at least one test that ran.`,
    };
  }
  if (hasDep("jest")) {
    reasons.push("package.json has jest: test passes on exit 0");
    return {
      ids: ["test", "npm-test"],
      check: { run: ["npx", "jest", "--ci"], timeout: TIMEOUT.test },
      why: `package.json's test script is ${test}; jest passes on exit 0 only. Add jest-junit and a report to require tests that ran.`,
    };
  }
  return {
    ids: ["test", "npm-test"],
    check: { run: ["npm", "test"], timeout: TIMEOUT.test },
    why: `package.json's test script (${test}); passes on exit 0 only: no test report is known for it.`,
  };
}

/** What the checks require of Node: the lower bound package.json's engines.node gives, else plain `node`. */
function nodeRequirement(engines: Record<string, unknown> | null, reasons: string[]): string {
  const range = typeof engines?.node === "string" ? engines.node.trim() : null;
  const version = range ? SIMPLE_NODE_RANGE.exec(range)?.[1] : undefined;
  const node = version ? `node>=${version}` : "node";
  reasons.push(
    version
      ? `package.json engines.node ${range}: ${node}`
      : range
        ? `package.json engines.node ${range} is not a simple lower bound: node`
        : "package.json names no engines.node: node",
  );
  return node;
}

/** The install setup step its lockfile names (or a plain npm install), and the registries it reaches. */
async function installStep(
  paths: ReadonlySet<string>,
  read: Read,
  deps: Record<string, unknown>,
  from: string[],
  reasons: string[],
): Promise<{ setup: Finding["setup"]; registries: { hosts: string[]; from: string } | null }> {
  const setup: Finding["setup"] = [];
  const lockfiles: [string, string[], string][] = [
    ["package-lock.json", ["npm", "ci", "--no-audit", "--no-fund"], "npm ci"],
    ["pnpm-lock.yaml", ["npx", "pnpm", "install", "--frozen-lockfile"], "pnpm install --frozen-lockfile"],
    ["yarn.lock", ["npx", "yarn", "install", "--frozen-lockfile"], "yarn install --frozen-lockfile"],
  ];
  const lock = lockfiles.find(([f]) => paths.has(f));
  const registries =
    lock || Object.keys(deps).length > 0 ? await npmRegistries(paths, read, lock?.[0] === "yarn.lock") : null;
  if (registries) {
    reasons.push(`${registries.from}: install from ${list(registries.hosts)}`);
    if (registries.from === ".npmrc") from.push(".npmrc");
  }
  if (lock) {
    const [lockfile, run, what] = lock;
    from.push(lockfile);
    reasons.push(`${lockfile}: ${what}`);
    setup.push({
      step: { id: "install", run, cache: ["node_modules"], key: [lockfile] },
      why: `${lockfile}: install exactly what it locks; node_modules is kept until it changes.`,
    });
  } else if (Object.keys(deps).length > 0) {
    reasons.push("package.json has dependencies but no lockfile: npm install");
    setup.push({
      step: { id: "install", run: ["npm", "install", "--no-audit", "--no-fund"] },
      why: "No lockfile: npm install, uncached, since nothing pins what it installs.",
    });
  }
  return { setup, registries };
}

/** A host (and port when not the scheme's default) from a registry URL, or null when it is not an http(s) URL the schema takes. */
function registryHost(url: string): string | null {
  try {
    const u = new URL(url.trim());
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    const host = u.host.toLowerCase();
    return /^[a-z0-9.-]+(:\d+)?$/.test(host) ? host : null;
  } catch {
    return null;
  }
}

/**
 * The hosts an npm install of this repository reaches: the registries its root .npmrc names
 * (`registry=` and `@scope:registry=`), else npm's default, registry.npmjs.org (and yarn's, for a
 * yarn.lock). Setup steps reach
 * exactly these (docs/checks-file.md, What runs with network, and what never does); a lockfile's
 * `resolved` URLs on another host
 * would be refused, and the install's log says which.
 */
async function npmRegistries(
  paths: ReadonlySet<string>,
  read: Read,
  yarn: boolean,
): Promise<{ hosts: string[]; from: string }> {
  const text = paths.has(".npmrc") ? await read(".npmrc") : null;
  const hosts = new Set<string>();
  for (const line of (text ?? "").split(/\r?\n/)) {
    const m = /^\s*(?:@[^:=\s]+:)?registry\s*=\s*(\S+)\s*$/.exec(line);
    const host = m?.[1] ? registryHost(m[1]) : null;
    if (host) hosts.add(host);
  }
  if (hosts.size > 0) return { hosts: [...hosts], from: ".npmrc" };
  // Yarn 1 resolves through its own mirror of the npm registry; npx fetches yarn itself from npm's.
  return yarn
    ? { hosts: ["registry.npmjs.org", "registry.yarnpkg.com"], from: "npm's and yarn's default registries" }
    : { hosts: ["registry.npmjs.org"], from: "npm's default registry" };
}
