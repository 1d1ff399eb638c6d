import { describe, expect, it } from "vitest";
import { parseChecksFile } from "./checks-file.ts";
import { type DetectedChecks, detectChecks } from "./detect-checks.ts";

/** An in-memory tree; `reads` records which files detection asked for. */
function tree(files: Record<string, string>) {
  const reads: string[] = [];
  return {
    reads,
    input: {
      paths: Object.keys(files),
      read: async (path: string) => {
        reads.push(path);
        return files[path] ?? null;
      },
    },
  };
}

/** Detects, and holds every proposal to the contract: its YAML reads back, through the schema, as its file. */
async function detect(files: Record<string, string>): Promise<DetectedChecks | null> {
  const r = await detectChecks(tree(files).input);
  if (r) {
    const back = parseChecksFile(r.yaml);
    expect(back).toEqual({ ok: true, file: r.file });
    expect(r.yaml).toMatch(/^# Detected by Rhumbatron/);
  }
  return r;
}

const pkg = (p: object) => JSON.stringify(p, null, 2);
const VITEST_REPORT = ".rhumbatron/reports/test.xml";
const PYTEST = {
  id: "test",
  run: ["pytest", "-q", "--junitxml=.rhumbatron/reports/pytest.xml"],
  timeout: 600,
  report: { format: "junit", path: ".rhumbatron/reports/pytest.xml" },
};

describe("detecting a repository's checks", () => {
  it("node with vitest and a lockfile: build prepares, vitest writes a JUnit report, lint from medium risk, npm ci cached on the lockfile", async () => {
    const r = await detect({
      "package.json": pkg({
        scripts: { build: "tsc -b", test: "vitest", lint: "biome check ." },
        devDependencies: { vitest: "^3.0.0", typescript: "^5" },
        engines: { node: ">=20" },
      }),
      "package-lock.json": "{}",
      "src/index.ts": "",
    });
    expect(r?.file).toEqual({
      version: 1,
      requires: ["node>=20"],
      registries: ["registry.npmjs.org"],
      setup: [
        {
          id: "install",
          run: ["npm", "ci", "--no-audit", "--no-fund"],
          cache: ["node_modules"],
          key: ["package-lock.json"],
        },
      ],
      checks: [
        { id: "build", run: ["npm", "run", "-s", "build"], timeout: 300, prepares: true },
        {
          id: "test",
          run: ["npx", "vitest", "run", "--reporter=junit", `--outputFile=${VITEST_REPORT}`],
          timeout: 600,
          report: { format: "junit", path: VITEST_REPORT },
          related: [
            "npx",
            "vitest",
            "related",
            "--run",
            "--reporter=junit",
            `--outputFile=${VITEST_REPORT}`,
            "{files}",
          ],
          only: ["npx", "vitest", "run", "--reporter=junit", `--outputFile=${VITEST_REPORT}`, "-t", "{pattern}"],
        },
        {
          id: "lint",
          run: ["npm", "run", "-s", "lint"],
          timeout: 300,
          when: [{ tiers: ["medium", "high", "critical"] }],
        },
      ],
    });
    expect(r?.reasons).toEqual([
      "package.json has scripts build, test and lint",
      "package.json has vitest: test with a JUnit report",
      "package.json engines.node >=20: node>=20",
      "npm's default registry: install from registry.npmjs.org",
      "package-lock.json: npm ci",
    ]);
    expect(r?.yaml).toContain("# package.json, package-lock.json.");
    expect(r?.yaml).toContain("  # package.json's build script (tsc -b)");
    expect(r?.yaml).toContain("run: [ npm, run, -s, build ]");
  });

  it("npm's placeholder test script is no test: a build still gets its build check, nothing else gives null", async () => {
    const placeholder = 'echo "Error: no test specified" && exit 1';
    const buildOnly = await detect({
      "package.json": pkg({ scripts: { build: "tsc", test: placeholder } }),
    });
    expect(buildOnly?.file).toEqual({
      version: 1,
      requires: ["node"],
      checks: [{ id: "build", run: ["npm", "run", "-s", "build"], timeout: 300, prepares: true }],
    });
    expect(buildOnly?.reasons).toEqual([
      "package.json has script build",
      "package.json's test script is npm's placeholder: no test check",
      "package.json names no engines.node: node",
    ]);

    expect(
      await detect({
        "package.json": pkg({ scripts: { test: placeholder }, dependencies: { express: "^4" } }),
        "package-lock.json": "{}",
        "README.md": "# hi",
      }),
    ).toBeNull();
  });

  it("node with jest passes on exit 0 and says jest-junit would give a report; yarn and pnpm install through npx", async () => {
    const yarn = await detect({
      "package.json": pkg({ scripts: { test: "jest" }, devDependencies: { jest: "^29" } }),
      "yarn.lock": "",
    });
    expect(yarn?.file.checks).toEqual([{ id: "test", run: ["npx", "jest", "--ci"], timeout: 600 }]);
    expect(yarn?.file.setup).toEqual([
      {
        id: "install",
        run: ["npx", "yarn", "install", "--frozen-lockfile"],
        cache: ["node_modules"],
        key: ["yarn.lock"],
      },
    ]);
    expect(yarn?.yaml).toMatch(/jest-junit/);

    const pnpm = await detect({
      "package.json": pkg({ scripts: { test: "node --test" } }),
      "pnpm-lock.yaml": "",
    });
    expect(pnpm?.file.checks).toEqual([{ id: "test", run: ["npm", "test"], timeout: 600 }]);
    expect(pnpm?.file.setup?.[0]?.run).toEqual(["npx", "pnpm", "install", "--frozen-lockfile"]);
  });

  it("a detected install reaches the registries the root .npmrc names, else npm's default (and yarn's for a yarn.lock); nothing without an install", async () => {
    const test = { scripts: { test: "node --test" }, dependencies: { "left-pad": "1.3.0" } };
    const own = await detect({
      "package.json": pkg(test),
      "package-lock.json": "{}",
      ".npmrc": "registry = https://npm.example.com/\n@acme:registry=http://10.0.0.5:4873/\n; a comment\nfund=false\n",
    });
    expect(own?.file.registries).toEqual(["npm.example.com", "10.0.0.5:4873"]);
    expect(own?.reasons).toContain(".npmrc: install from npm.example.com and 10.0.0.5:4873");
    expect(own?.yaml).toMatch(
      /^# {2}package\.json, package-lock\.json, \.npmrc\.$|package\.json, \.npmrc, package-lock\.json|\.npmrc/m,
    );
    const yarn = await detect({ "package.json": pkg(test), "yarn.lock": "" });
    expect(yarn?.file.registries).toEqual(["registry.npmjs.org", "registry.yarnpkg.com"]);
    // An .npmrc without a usable registry line (a file: URL, nothing) falls back to npm's default.
    const odd = await detect({ "package.json": pkg(test), ".npmrc": "registry=file:///srv/npm\n" });
    expect(odd?.file.registries).toEqual(["registry.npmjs.org"]);
    const none = await detect({ "package.json": pkg({ scripts: { test: "node --test" } }) });
    expect(none?.file.setup).toBeUndefined();
    expect(none?.file.registries).toBeUndefined();
  });

  it("dependencies without a lockfile: npm install, neither cached nor keyed; no dependencies: no setup", async () => {
    const loose = await detect({
      "package.json": pkg({ scripts: { test: "mocha" }, devDependencies: { mocha: "^10" } }),
    });
    expect(loose?.file.setup).toEqual([{ id: "install", run: ["npm", "install", "--no-audit", "--no-fund"] }]);
    const bare = await detect({ "package.json": pkg({ scripts: { test: "node test.js" } }) });
    expect(bare?.file.setup).toBeUndefined();
  });

  it("a lint script alone applies to every Candidate: a tier rule would leave low-risk Changes verified by nothing", async () => {
    const r = await detect({ "package.json": pkg({ scripts: { lint: "eslint ." } }) });
    expect(r?.file.checks).toEqual([{ id: "lint", run: ["npm", "run", "-s", "lint"], timeout: 300 }]);
  });

  it("engines.node: a single lower bound is required, anything richer gives plain node", async () => {
    const requires = async (node: unknown) =>
      (await detect({ "package.json": pkg({ scripts: { build: "tsc" }, engines: { node } }) }))?.file.requires;
    expect(await requires(">=18")).toEqual(["node>=18"]);
    expect(await requires(">= 20.11")).toEqual(["node>=20.11"]);
    expect(await requires("^22")).toEqual(["node>=22"]);
    expect(await requires("^20.1.0")).toEqual(["node>=20.1.0"]);
    expect(await requires(">=18 <21")).toEqual(["node"]);
    expect(await requires("^18 || ^20")).toEqual(["node"]);
    expect(await requires("~20")).toEqual(["node"]);
    expect(await requires("20.x")).toEqual(["node"]);
    expect(await requires(20)).toEqual(["node"]);
  });

  it("a package.json that does not parse, or is not an object, is ignored rather than thrown", async () => {
    expect(await detect({ "package.json": "{ scripts: " })).toBeNull();
    expect(await detect({ "package.json": "[1, 2]" })).toBeNull();
    const r = await detect({ "package.json": "{ nope", "go.mod": "module example.com/x\n" });
    expect(r?.file.checks.map((c) => c.id)).toEqual(["build", "test"]);
    expect(r?.file.requires).toEqual(["go"]);
    expect(r?.reasons).toEqual(["package.json does not parse: ignored", "go.mod: go build ./... and go test ./..."]);
  });

  it("python: pyproject's [tool.pytest.ini_options] gives pytest with a JUnit report", async () => {
    const t = tree({
      "pyproject.toml": '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-ra"\n',
      "src/x/__init__.py": "",
      "docs/index.md": "",
    });
    const r = await detectChecks(t.input);
    expect(r?.file).toEqual({ version: 1, requires: ["python3", "pytest"], checks: [PYTEST] });
    expect(r?.reasons).toEqual(["pyproject.toml has [tool.pytest.ini_options]"]);
    expect(t.reads).toEqual(["pyproject.toml"]);
    expect(parseChecksFile(r?.yaml ?? "")).toEqual({ ok: true, file: r?.file });
  });

  it("python: a pyproject without pytest is not enough, a commented section does not count, a test file is", async () => {
    expect(await detect({ "pyproject.toml": '[project]\nname = "x"\n# [tool.pytest.ini_options]\n' })).toBeNull();
    const r = await detect({ "pyproject.toml": '[project]\nname = "x"\n', "tests/test_x.py": "def test_x(): pass\n" });
    expect(r?.file).toEqual({ version: 1, requires: ["python3", "pytest"], checks: [PYTEST] });
    expect(r?.reasons).toEqual(["1 Python test file (tests/test_x.py): pytest"]);
  });

  it("python: pytest.ini, tox.ini's [pytest], setup.cfg's [tool:pytest], *_test.py; vendored tests do not count", async () => {
    const reasons = async (files: Record<string, string>) => (await detect(files))?.reasons ?? null;
    expect(await reasons({ "pytest.ini": "" })).toEqual(["pytest.ini"]);
    expect(await reasons({ "tox.ini": "[tox]\n[pytest]\naddopts = -q\n" })).toEqual(["tox.ini has [pytest]"]);
    expect(await reasons({ "tox.ini": "[tox]\nenvlist = py311\n" })).toBeNull();
    expect(await reasons({ "setup.cfg": "[metadata]\n[tool:pytest]\n" })).toEqual(["setup.cfg has [tool:pytest]"]);
    expect(await reasons({ "pkg/thing_test.py": "" })).toEqual(["1 Python test file (pkg/thing_test.py): pytest"]);
    expect(await reasons({ ".venv/lib/site-packages/foo/test_foo.py": "", "node_modules/x/test_x.py": "" })).toBeNull();
    expect(await reasons({ "tests/test_helpers.txt": "", "testing.py": "" })).toBeNull();
  });

  it("go: a root go.mod builds and tests ./...", async () => {
    const r = await detect({ "go.mod": "module example.com/x\n", "main.go": "package main\n" });
    expect(r?.file).toEqual({
      version: 1,
      requires: ["go"],
      checks: [
        { id: "build", run: ["go", "build", "./..."], timeout: 300, prepares: true },
        { id: "test", run: ["go", "test", "./..."], timeout: 600 },
      ],
    });
  });

  it("rust: a root Cargo.toml builds and tests with cargo; one below the root does not count", async () => {
    const r = await detect({ "Cargo.toml": '[package]\nname = "x"\n', "src/main.rs": "" });
    expect(r?.file).toEqual({
      version: 1,
      requires: ["cargo"],
      checks: [
        { id: "build", run: ["cargo", "build"], timeout: 300, prepares: true },
        { id: "test", run: ["cargo", "test"], timeout: 600 },
      ],
    });
    expect(await detect({ "crates/x/Cargo.toml": "", "crates/x/go.mod": "", "web/package.json": "{}" })).toBeNull();
  });

  it("package.json and pyproject combined: distinct ids, requires and reasons from both", async () => {
    const r = await detect({
      "package.json": pkg({ scripts: { build: "vite build", test: "vitest run" }, devDependencies: { vitest: "^3" } }),
      "package-lock.json": "{}",
      "pyproject.toml": "[tool.pytest.ini_options]\n",
      "tests/test_api.py": "",
    });
    expect(r?.file.requires).toEqual(["node", "python3", "pytest"]);
    expect(r?.file.checks.map((c) => [c.id, c.run?.[0], c.prepares ?? false])).toEqual([
      ["build", "npm", true],
      ["test", "npx", false],
      ["pytest", "pytest", false],
    ]);
    expect(r?.file.checks[2]).toEqual({ ...PYTEST, id: "pytest" });
    expect(r?.file.setup?.map((s) => s.id)).toEqual(["install"]);
    expect(r?.reasons).toEqual([
      "package.json has scripts build and test",
      "package.json has vitest: test with a JUnit report",
      "package.json names no engines.node: node",
      "npm's default registry: install from registry.npmjs.org",
      "package-lock.json: npm ci",
      "pyproject.toml has [tool.pytest.ini_options]",
      "1 Python test file (tests/test_api.py): pytest",
    ]);
    expect(r?.yaml).toContain("# package.json, package-lock.json, pyproject.toml, test_*.py / *_test.py files.");
  });

  it("go and rust combined: only the first build prepares the tree, and the second ids are prefixed", async () => {
    const r = await detect({ "go.mod": "module x\n", "Cargo.toml": "[package]\n" });
    expect(r?.file.requires).toEqual(["go", "cargo"]);
    expect(r?.file.checks.map((c) => [c.id, c.prepares ?? false])).toEqual([
      ["build", true],
      ["test", false],
      ["cargo-build", false],
      ["cargo-test", false],
    ]);
    expect(r?.yaml).toMatch(/Another check prepares the tree/);
  });

  it("nothing to detect gives null, never an empty gate", async () => {
    expect(await detect({})).toBeNull();
    expect(await detect({ "README.md": "# x", "index.html": "<p>" })).toBeNull();
    expect(await detect({ "package.json": pkg({ name: "x", dependencies: { a: "1" } }) })).toBeNull();
  });
});
