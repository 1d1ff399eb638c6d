import { isDeepStrictEqual } from "node:util";
import { Document, isMap, isSeq, type Node, type YAMLMap } from "yaml";
import { CHECKS_FILE, type ChecksFile, type DeclaredCheck, parseChecksFile, type SetupStep } from "./checks-file.ts";

/**
 * Checks proposed for a repository that has no checks file (checks-file.ts). Such a repository
 * must still be verified, so we read what is at its root (package.json, pyproject.toml, go.mod,
 * Cargo.toml, …), propose the checks its own tools already run, use them for the Candidate (marked
 * "detected") and show the proposed file so the team can commit it and own it from then on.
 *
 * Pure: the caller lists the tree and reads files; nothing here touches the disk, a process or the
 * network, so the same tree always gives the same proposal. It is deliberately plain: root files
 * only, each rule a thing a person can check by looking at the repository, and every check says
 * in the file why it is there. When nothing can be detected the answer is null, never an empty or
 * made-up gate: the caller blocks the Candidate and says the project needs a checks file.
 */

export interface DetectInput {
  /** Every path in the tree (posix, relative), e.g. from git ls-tree. */
  paths: readonly string[];
  /** The text of a file at the root or below, or null when absent/binary/too large. Only called for files we need. */
  read(path: string): Promise<string | null>;
}

export interface DetectedChecks {
  /** The proposal as the schema reads it (the same value `parseChecksFile(yaml)` gives). */
  file: ChecksFile;
  /** The proposed `.rhumbatron/checks.yml`: a header saying it was detected and from what, and why each check is there. */
  yaml: string;
  /** What the proposal rests on, one finding a line, e.g. "package-lock.json: npm ci". */
  reasons: string[];
}

/** Where detected checks write their test reports: inside the gate folder, so a Change cannot pass by writing one. */
const REPORTS = ".rhumbatron/reports";

/** Seconds per kind of check: a build or a lint is quick, a test suite gets the most the Sandbox allows bar a margin. */
const TIMEOUT = { build: 300, test: 600, lint: 300 } as const;

/** npm init's test script: a project that has it has no tests, and running it only fails. */
const NPM_PLACEHOLDER_TEST = /^echo\s+(["'])Error: no test specified\1\s*&&\s*exit\s+1$/;

/** `>=20`, `>= 20.11`, `^20`, `^20.11.1`: one lower bound, nothing else. Anything richer gives plain `node`. */
const SIMPLE_NODE_RANGE = /^(?:>=\s*|\^)(\d+(?:\.\d+){0,2})$/;

/** Folders of installed or vendored code: their test files are not the project's. */
const NOT_THE_PROJECTS = /(^|\/)(node_modules|\.venv|venv|\.tox|site-packages|vendor)\//;

/** A check before its id is settled: ids clash only when ecosystems are combined. */
interface Proposed {
  /** The id it gets when free, and the one it falls back to when another ecosystem took it. */
  ids: [string, string];
  check: Omit<DeclaredCheck, "id">;
  /** The comment written above the check in the file. */
  why: string;
}

interface Finding {
  /** The root files it was read from, for the file's header. */
  from: string[];
  requires: string[];
  /** The hosts its setup installs from (the checks file's `registries`). */
  registries?: string[];
  setup: { step: SetupStep; why: string }[];
  checks: Proposed[];
  reasons: string[];
}

export async function detectChecks(input: DetectInput): Promise<DetectedChecks | null> {
  const paths = new Set(input.paths.map((p) => p.replace(/^\.\//, "")));
  const findings = (
    await Promise.all([
      detectNode(paths, input.read),
      detectPython(paths, input.read),
      detectGo(paths),
      detectRust(paths),
    ])
  ).filter((f): f is Finding => f !== null);
  const checks = findings.flatMap((f) => f.checks);
  if (checks.length === 0) return null;

  const file = assemble(findings);
  const yaml = render(file, findings);
  const read = parseChecksFile(yaml);
  if (!read.ok)
    throw new Error(`detected checks do not pass the schema (a bug): ${JSON.stringify(read.problems)}\n${yaml}`);
  if (!isDeepStrictEqual(read.file, file.value))
    throw new Error(`detected checks do not read back as proposed (a bug):\n${yaml}`);
  return { file: read.file, yaml, reasons: findings.flatMap((f) => f.reasons) };
}

/** The file, with the comment of each check and step beside it (by index) for rendering. */
interface Assembled {
  value: ChecksFile;
  checkWhy: string[];
  setupWhy: string[];
}

/**
 * One file from every ecosystem found: requires and setup concatenated, each check under its first
 * id unless taken, and only the first build prepares the tree (the schema allows one; the others
 * still run as checks).
 */
function assemble(findings: readonly Finding[]): Assembled {
  const requires = [...new Set(findings.flatMap((f) => f.requires))];
  const registries = [...new Set(findings.flatMap((f) => f.registries ?? []))];
  const setup = findings.flatMap((f) => f.setup);
  const taken = new Set<string>();
  let prepared = false;
  const checks: DeclaredCheck[] = [];
  const checkWhy: string[] = [];
  for (const p of findings.flatMap((f) => f.checks)) {
    const id = taken.has(p.ids[0]) ? p.ids[1] : p.ids[0];
    taken.add(id);
    const { prepares, ...rest } = p.check;
    let why = p.why;
    const check: DeclaredCheck = { id, ...rest };
    if (prepares && !prepared) {
      check.prepares = true;
      prepared = true;
    } else if (prepares) {
      why += " Another check prepares the tree, so this one only has to pass.";
    }
    checks.push(check);
    checkWhy.push(why);
  }
  const value: ChecksFile = {
    version: 1,
    ...(requires.length ? { requires } : {}),
    ...(registries.length ? { registries } : {}),
    ...(setup.length ? { setup: setup.map((s) => s.step) } : {}),
    checks,
  };
  return { value, checkWhy, setupWhy: setup.map((s) => s.why) };
}

/** The YAML text, built as a document so comments sit on their nodes; argv and short lists in flow style. */
function render(file: Assembled, findings: readonly Finding[]): string {
  const doc = new Document(file.value);
  const from = [...new Set(findings.flatMap((f) => f.from))];
  doc.commentBefore = [
    ` Detected by Rhumbatron: the repository has no ${CHECKS_FILE},`,
    " so these checks were proposed from what is in it:",
    ` ${from.join(", ")}.`,
    ` Review them and commit this file as ${CHECKS_FILE};`,
    " from then on it, not detection, decides what verifies a Candidate.",
  ].join("\n");
  flowLeaves(doc.contents as Node);
  const setup = doc.get("setup", true);
  if (isSeq(setup)) for (const [i, n] of setup.items.entries()) setComment(n, file.setupWhy[i]);
  const checks = doc.get("checks", true);
  if (isSeq(checks)) for (const [i, n] of checks.items.entries()) setComment(n, file.checkWhy[i]);
  return doc.toString({ lineWidth: 0 });
}

/** Sequences of scalars (argv, requires, tiers) and small maps in them read best on one line. */
function flowLeaves(node: Node | null | undefined): void {
  if (isSeq(node)) {
    if (node.items.every((i) => !isMap(i) && !isSeq(i))) node.flow = true;
    else for (const i of node.items) flowLeaves(i as Node);
  } else if (isMap(node)) {
    for (const pair of (node as YAMLMap).items) flowLeaves(pair.value as Node);
    const report = node.get("report", true);
    if (isMap(report)) report.flow = true;
    const when = node.get("when", true);
    if (isSeq(when)) for (const rule of when.items) if (isMap(rule)) rule.flow = true;
  }
}

function setComment(node: unknown, why: string | undefined): void {
  if (why && isMap(node)) node.commentBefore = ` ${why}`;
}

type Read = DetectInput["read"];

const record = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

/**
 * Node: the root package.json's own scripts. build (prepares the tree), test (a JUnit report when
 * vitest is there to give one), lint (medium risk and up, or always when it is the only check), the
 * Node version from engines, and the install its lockfile names. A package.json that does not parse
 * is not a Node project we can speak for: it is ignored (the reason says so), never thrown.
 */
async function detectNode(paths: ReadonlySet<string>, read: Read): Promise<Finding | null> {
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
  const script = (name: string) => {
    const s = scripts[name];
    return typeof s === "string" && s.trim() ? s.trim() : null;
  };
  const deps = { ...record(pkg.dependencies), ...record(pkg.devDependencies) };
  const hasDep = (name: string) => Object.hasOwn(deps, name);
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
    const report = `${REPORTS}/test.xml`;
    if (hasDep("vitest")) {
      reasons.push("package.json has vitest: test with a JUnit report");
      checks.push({
        ids: ["test", "npm-test"],
        check: {
          run: ["npx", "vitest", "run", "--reporter=junit", `--outputFile=${report}`],
          timeout: TIMEOUT.test,
          report: { format: "junit", path: report },
          related: ["npx", "vitest", "related", "--run", "--reporter=junit", `--outputFile=${report}`, "{files}"],
        },
        why: `package.json's test script is ${test}; vitest is run directly so it writes a JUnit report, and passing needs at least one test that ran.`,
      });
    } else if (hasDep("jest")) {
      reasons.push("package.json has jest: test passes on exit 0");
      checks.push({
        ids: ["test", "npm-test"],
        check: { run: ["npx", "jest", "--ci"], timeout: TIMEOUT.test },
        why: `package.json's test script is ${test}; jest passes on exit 0 only. Add jest-junit and a report to require tests that ran.`,
      });
    } else {
      checks.push({
        ids: ["test", "npm-test"],
        check: { run: ["npm", "test"], timeout: TIMEOUT.test },
        why: `package.json's test script (${test}); passes on exit 0 only: no test report is known for it.`,
      });
    }
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
  if (checks.length === 0) return { from: [], requires: [], setup: [], checks: [], reasons };
  reasons.unshift(`package.json has ${plural("script", used)} ${list(used)}`);

  const engines = record(pkg.engines);
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

  const from = ["package.json"];
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
  return { from, requires: [node], setup, checks, reasons, ...(registries ? { registries: registries.hosts } : {}) };
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

/**
 * Python: pytest configured at the root (pyproject.toml's [tool.pytest…], pytest.ini, tox.ini's
 * [pytest], setup.cfg's [tool:pytest]) or test files pytest collects (test_*.py, *_test.py). One
 * check, with a JUnit report so passing needs tests that ran. No install step: the Sandbox's
 * allowlist has no pip, so the project's packages must be on the host (requires says pytest).
 */
async function detectPython(paths: ReadonlySet<string>, read: Read): Promise<Finding | null> {
  /** "pyproject.toml has [tool.pytest.ini_options]" when the file has the section header (not in a comment). */
  const section = async (file: string, header: RegExp) => {
    if (!paths.has(file)) return null;
    const found = header.exec((await read(file)) ?? "");
    return found ? `${file} has ${found[1]}` : null;
  };
  const configured = [
    await section("pyproject.toml", /^[ \t]*(\[tool\.pytest(?:\.[^\]\s]+)?\])[ \t]*(?:#.*)?$/m),
    paths.has("pytest.ini") ? "pytest.ini" : null,
    await section("tox.ini", /^[ \t]*(\[pytest\])[ \t]*(?:[#;].*)?$/m),
    await section("setup.cfg", /^[ \t]*(\[tool:pytest\])[ \t]*(?:[#;].*)?$/m),
  ].filter((r): r is string => r !== null);
  const testFiles = [...paths]
    .filter((p) => !NOT_THE_PROJECTS.test(p) && /(^|\/)(test_[^/]*|[^/]*_test)\.py$/.test(p))
    .sort();
  if (configured.length === 0 && testFiles.length === 0) return null;

  const reasons = [...configured];
  if (testFiles.length > 0)
    reasons.push(
      `${testFiles.length} Python test ${testFiles.length === 1 ? "file" : "files"} (${testFiles.slice(0, 3).join(", ")}${testFiles.length > 3 ? ", …" : ""}): pytest`,
    );
  const report = `${REPORTS}/pytest.xml`;
  const from = configured.map((r) => r.split(" ")[0] as string);
  if (testFiles.length > 0) from.push("test_*.py / *_test.py files");
  return {
    from,
    requires: ["python3", "pytest"],
    setup: [],
    checks: [
      {
        ids: ["test", "pytest"],
        check: {
          run: ["pytest", "-q", `--junitxml=${report}`],
          timeout: TIMEOUT.test,
          report: { format: "junit", path: report },
        },
        why: `${reasons.join("; ")}. Passing needs at least one test that ran; the packages the tests import must be on the host.`,
      },
    ],
    reasons,
  };
}

/** Go: a module at the root builds and tests every package under it. */
function detectGo(paths: ReadonlySet<string>): Finding | null {
  if (!paths.has("go.mod")) return null;
  return {
    from: ["go.mod"],
    requires: ["go"],
    setup: [],
    checks: [
      {
        ids: ["build", "go-build"],
        check: { run: ["go", "build", "./..."], timeout: TIMEOUT.build, prepares: true },
        why: "go.mod: every package of the module builds.",
      },
      {
        ids: ["test", "go-test"],
        check: { run: ["go", "test", "./..."], timeout: TIMEOUT.test },
        why: "go.mod: every package's tests pass (exit 0; go test writes no JUnit report).",
      },
    ],
    reasons: ["go.mod: go build ./... and go test ./..."],
  };
}

/** Rust: a crate or workspace at the root, built and tested by cargo. */
function detectRust(paths: ReadonlySet<string>): Finding | null {
  if (!paths.has("Cargo.toml")) return null;
  return {
    from: ["Cargo.toml"],
    requires: ["cargo"],
    setup: [],
    checks: [
      {
        ids: ["build", "cargo-build"],
        check: { run: ["cargo", "build"], timeout: TIMEOUT.build, prepares: true },
        why: "Cargo.toml: the crate builds.",
      },
      {
        ids: ["test", "cargo-test"],
        check: { run: ["cargo", "test"], timeout: TIMEOUT.test },
        why: "Cargo.toml: its tests pass (exit 0; cargo test writes no JUnit report).",
      },
    ],
    reasons: ["Cargo.toml: cargo build and cargo test"],
  };
}

const plural = (word: string, items: readonly string[]) => (items.length === 1 ? word : `${word}s`);

/** "build", "build and test", "build, test and lint". */
function list(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}
