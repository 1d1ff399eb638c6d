import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { vendoredPytest } from "@rhumbatron/fixtures";
import { describe, expect, it } from "vitest";
import {
  MAX_KEPT_TESTS,
  MAX_MESSAGE_CHARS,
  MAX_REPORT_CHARS,
  ReportUnreadable,
  readJUnit,
  readReport,
  readTap,
  type TestOutcome,
  type TestReport,
} from "./reports.ts";

/**
 * Reports from the real runners wherever the runner is on this machine: node --test (both
 * reporters), pytest and vitest run here, in a temporary folder, on small test files written for
 * the purpose. Jest and Playwright reports are samples under report-samples/, each made by a real
 * run that its top comment describes.
 */

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const samples = fileURLToPath(new URL("./report-samples/", import.meta.url));

/** The environment for a runner started from inside a vitest worker, without vitest's own marks. */
function runnerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith("VITEST") || k === "NODE_OPTIONS" || k === "NODE_ENV" || k.startsWith("PYTEST")) continue;
    env[k] = v;
  }
  return { ...env, NO_COLOR: "1", FORCE_COLOR: "0" };
}

/** Runs a command to its end and returns what it printed; the exit code is the runner's business. */
function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = runnerEnv()): string {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", env });
  if (r.error) throw r.error;
  return r.stdout;
}

function tempDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "rh-reports-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** Name, suite path, status and message of each test: the parts that do not vary between runs. */
const summary = (r: TestReport) =>
  r.tests.map((t) => ({ id: t.id, name: t.name, suite: t.suite, file: t.file, status: t.status, message: t.message }));

const nodeTests = `import { test, describe, it } from "node:test";
import assert from "node:assert";
test("adds", () => { assert.strictEqual(1 + 1, 2); });
test("breaks", () => { assert.strictEqual(1 + 1, 3, "one and one make two"); });
test("later", { skip: "not yet" }, () => {});
test("someday", { todo: true }, () => {});
describe("maths", () => {
  it("multiplies", () => { assert.strictEqual(2 * 3, 6); });
  it("divides", () => { assert.strictEqual(6 / 3, 2); });
});
`;

/**
 * node --test over `source` in a temporary folder; with null, over an empty folder, which node
 * reports as a run of 0 tests (a file without tests would count as one passing test itself).
 */
function nodeTest(reporter: "junit" | "tap", source: string | null): string {
  const dir = tempDir(source === null ? {} : { "t.test.mjs": source });
  return run(
    process.execPath,
    ["--test", `--test-reporter=${reporter}`, ...(source === null ? [] : ["t.test.mjs"])],
    dir,
  );
}

/** What node's reporters say of nodeTests, failure first; only the message differs between them. */
function nodeExpected(message: string) {
  const t = (name: string, status: TestOutcome["status"], suite: string[] = []) => ({
    id: [...suite, name].join(" > "),
    name,
    suite,
    file: null,
    status,
    message: status === "failed" ? message : null,
  });
  return [
    t("breaks", "failed"),
    t("adds", "passed"),
    t("later", "skipped"),
    t("someday", "skipped"),
    t("multiplies", "passed", ["maths"]),
    t("divides", "passed", ["maths"]),
  ];
}

describe("readJUnit on real reports", () => {
  it("reads node --test's junit reporter: cases under <testsuites>, a describe as a nested suite", () => {
    const r = readJUnit(nodeTest("junit", nodeTests));
    expect(r.format).toBe("junit");
    expect(r.counts).toEqual({ tests: 6, passed: 3, failed: 1, skipped: 2 });
    // Node's reporter writes the message attribute with the assertion's newlines dropped.
    expect(summary(r)).toEqual(nodeExpected("one and one make two2 !== 3"));
    for (const t of r.tests) {
      expect(t.durationMs).toBeTypeOf("number");
      expect(t.durationMs).toBeGreaterThanOrEqual(0);
      expect(t.durationMs).toBeLessThan(10_000);
    }
  });

  it("reads node --test's junit report of a run with no tests as 0 tests", () => {
    const r = readJUnit(nodeTest("junit", null));
    expect(r).toEqual({ format: "junit", tests: [], counts: { tests: 0, passed: 0, failed: 0, skipped: 0 } });
  });

  const pytestFile = `import pytest
def test_adds():
    assert 1 + 1 == 2
def test_breaks():
    assert 1 + 1 == 3, "one and one make two"
@pytest.mark.skip(reason="not yet")
def test_later():
    pass
class TestMaths:
    def test_multiplies(self):
        assert 2 * 3 == 6
@pytest.fixture
def broken():
    raise ValueError("fixture broke")
def test_setup_error(broken):
    pass
`;

  function pytest(family: "xunit1" | "xunit2"): TestReport {
    const dir = tempDir({ "test_maths.py": pytestFile });
    // Debian's pytest from fixtures/debian, never the host's (packages/fixtures/src/pytest.ts).
    const py = vendoredPytest();
    run(
      py.command,
      [...py.args, "-q", "-p", "no:cacheprovider", "-o", `junit_family=${family}`, "--junitxml=out.xml"],
      dir,
      { ...runnerEnv(), PYTHONPATH: py.env.PYTHONPATH, PYTHONDONTWRITEBYTECODE: "1" },
    );
    return readJUnit(readFileSync(join(dir, "out.xml"), "utf8"));
  }

  it("reads pytest's default (xunit2) report: one suite named pytest, no file, errors as failures", () => {
    const r = pytest("xunit2");
    expect(r.counts).toEqual({ tests: 5, passed: 2, failed: 2, skipped: 1 });
    const t = (name: string, status: TestOutcome["status"], message: string | null = null) => ({
      id: `pytest > ${name}`,
      name,
      suite: ["pytest"],
      file: null,
      status,
      message,
    });
    expect(summary(r)).toEqual([
      // pytest writes the newline in the message attribute as &#10;.
      t("test_breaks", "failed", "AssertionError: one and one make two\nassert (1 + 1) == 3"),
      t("test_setup_error", "failed", 'failed on setup with "ValueError: fixture broke"'),
      t("test_adds", "passed"),
      t("test_later", "skipped"),
      t("test_multiplies", "passed"),
    ]);
    expect(r.tests.find((x) => x.name === "test_later")?.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("reads pytest's xunit1 report, whose test cases name their file", () => {
    const r = pytest("xunit1");
    expect(r.counts).toEqual({ tests: 5, passed: 2, failed: 2, skipped: 1 });
    expect(r.tests.map((t) => [t.id, t.file])).toEqual([
      ["test_maths.py > pytest > test_breaks", "test_maths.py"],
      ["test_maths.py > pytest > test_setup_error", "test_maths.py"],
      ["test_maths.py > pytest > test_adds", "test_maths.py"],
      ["test_maths.py > pytest > test_later", "test_maths.py"],
      ["test_maths.py > pytest > test_multiplies", "test_maths.py"],
    ]);
  });

  it("reads vitest's junit reporter: the file as the suite, describe blocks inside the name", () => {
    const dir = tempDir({
      "maths.test.js": `test("adds", () => { expect(1 + 1).toBe(2); });
test("breaks", () => { expect(1 + 1, "one and one make two").toBe(3); });
test.skip("later", () => {});
test.todo("someday");
describe("maths", () => {
  test("multiplies", () => { expect(2 * 3).toBe(6); });
  describe("inner", () => {
    test("divides", () => { expect(6 / 3).toBe(2); });
  });
});
`,
    });
    const vitest = join(repoRoot, "node_modules/vitest/vitest.mjs");
    run(
      process.execPath,
      [vitest, "run", "--root", dir, "--globals", "--reporter=junit", `--outputFile=${join(dir, "out.xml")}`],
      dir,
    );
    const r = readJUnit(readFileSync(join(dir, "out.xml"), "utf8"));
    expect(r.counts).toEqual({ tests: 6, passed: 3, failed: 1, skipped: 2 });
    const t = (name: string, status: TestOutcome["status"], message: string | null = null) => ({
      id: `maths.test.js > ${name}`,
      name,
      suite: ["maths.test.js"],
      file: null,
      status,
      message,
    });
    expect(summary(r)).toEqual([
      t("breaks", "failed", "one and one make two: expected 2 to be 3 // Object.is equality"),
      t("adds", "passed"),
      t("later", "skipped"),
      t("someday", "skipped"),
      t("maths > multiplies", "passed"),
      t("maths > inner > divides", "passed"),
    ]);
  });

  it("reads Playwright's junit reporter (sample): a skipped test has no time", () => {
    const r = readJUnit(readFileSync(join(samples, "playwright-junit.xml"), "utf8"));
    expect(r.counts).toEqual({ tests: 6, passed: 3, failed: 1, skipped: 2 });
    const t = (name: string, status: TestOutcome["status"], durationMs: number | null, message: string | null) => ({
      id: `maths.spec.mjs > ${name}`,
      file: null,
      name,
      suite: ["maths.spec.mjs"],
      status,
      durationMs,
      message,
    });
    expect(r.tests).toEqual([
      t("breaks", "failed", 13, "one and one make two"),
      t("adds", "passed", 18, null),
      t("later", "skipped", null, null),
      t("someday", "skipped", null, null),
      t("maths › multiplies", "passed", 13, null),
      t("maths › inner › divides", "passed", 11, null),
    ]);
  });

  it("reads jest-junit's report (sample): the file attribute, the failure text as the message", () => {
    const r = readJUnit(readFileSync(join(samples, "jest-junit.xml"), "utf8"));
    // jest-junit writes a todo test as a plain (passing) testcase; we report what it says.
    expect(r.counts).toEqual({ tests: 6, passed: 4, failed: 1, skipped: 1 });
    expect(r.tests.map((t) => [t.id, t.name, t.suite, t.file, t.status, t.durationMs])).toEqual([
      ["maths.test.js > undefined > breaks", "breaks", ["undefined"], "maths.test.js", "failed", 3],
      ["maths.test.js > undefined > adds", "adds", ["undefined"], "maths.test.js", "passed", 18],
      ["maths.test.js > undefined > later", "later", ["undefined"], "maths.test.js", "skipped", 0],
      ["maths.test.js > undefined > someday", "someday", ["undefined"], "maths.test.js", "passed", 0],
      ["maths.test.js > undefined > maths multiplies", "maths multiplies", ["undefined"], "maths.test.js", "passed", 1],
      [
        "maths.test.js > undefined > maths inner divides",
        "maths inner divides",
        ["undefined"],
        "maths.test.js",
        "passed",
        0,
      ],
    ]);
    const message = r.tests[0]?.message ?? "";
    expect(message.split("\n").slice(0, 5)).toEqual([
      "Error: expect(received).toBe(expected) // Object.is equality",
      "",
      "Expected: 3",
      "Received: 2",
      "    at Object.toBe (/tmp/rhjest/maths.test.js:2:38)",
    ]);
    expect(message).toContain("    at new Promise (<anonymous>)\n");
    expect(message.endsWith("at runTest (/tmp/rhjest/node_modules/jest-runner/build/runTest.js:444:34)")).toBe(true);
  });
});

describe("readJUnit on the shapes other tools write", () => {
  it("takes the file from a testcase, else from its testsuite, and never from the classname", () => {
    const r = readJUnit(`<?xml version="1.0"?>
<testsuites name="all">
  <testsuite name="outer" file="src/a.test.ts">
    <testsuite name="inner">
      <testcase name="one" classname="src/b.test.ts" time="1.5"/>
      <testcase name="two" file="src/own.test.ts" time="0.25"><error message="">boom
  at here</error></testcase>
    </testsuite>
    <testcase name="three"><failure type="AssertionError"/></testcase>
  </testsuite>
  <testsuite name="loose"><testcase name="four" classname="x.y"><skipped/></testcase></testsuite>
</testsuites>`);
    expect(r.counts).toEqual({ tests: 4, passed: 1, failed: 2, skipped: 1 });
    expect(r.tests).toEqual([
      {
        id: "src/own.test.ts > outer > inner > two",
        file: "src/own.test.ts",
        name: "two",
        suite: ["outer", "inner"],
        status: "failed",
        durationMs: 250,
        // An empty message attribute gives way to the element's text.
        message: "boom\n  at here",
      },
      {
        id: "src/a.test.ts > outer > three",
        file: "src/a.test.ts",
        name: "three",
        suite: ["outer"],
        status: "failed",
        durationMs: null,
        // Neither a message nor text: the failure's type is all there is.
        message: "AssertionError",
      },
      {
        id: "src/a.test.ts > outer > inner > one",
        file: "src/a.test.ts",
        name: "one",
        suite: ["outer", "inner"],
        status: "passed",
        durationMs: 1500,
        message: null,
      },
      {
        id: "loose > four",
        file: null,
        name: "four",
        suite: ["loose"],
        status: "skipped",
        durationMs: null,
        message: null,
      },
    ]);
  });

  it("reads a lone <testsuite> root, CDATA and entities", () => {
    const r = readJUnit(
      `<testsuite name="s"><testcase name="a &amp; b" time="0.001205"><failure><![CDATA[x < y]]></failure></testcase></testsuite>`,
    );
    expect(r.tests).toEqual([
      {
        id: "s > a & b",
        file: null,
        name: "a & b",
        suite: ["s"],
        status: "failed",
        durationMs: 1.205,
        message: "x < y",
      },
    ]);
  });

  it("reads empty reports as 0 tests", () => {
    const none = { format: "junit", tests: [], counts: { tests: 0, passed: 0, failed: 0, skipped: 0 } };
    expect(readJUnit("<testsuites/>")).toEqual(none);
    expect(readJUnit('<?xml version="1.0"?>\n<testsuites name="vitest tests" tests="0"></testsuites>\n')).toEqual(none);
    expect(readJUnit('<testsuite name="empty" tests="0"/>')).toEqual(none);
  });

  it("throws ReportUnreadable for malformed XML and for XML that is not a test report", () => {
    const unreadable = (xml: string) => {
      try {
        readJUnit(xml);
      } catch (e) {
        expect(e).toBeInstanceOf(ReportUnreadable);
        return (e as Error).message;
      }
      throw new Error("no error");
    };
    expect(unreadable("<testsuites><testsuite></testsuites>")).toBe(
      "malformed XML: Expected closing tag 'testsuite' (opened in line 1, col 13) instead of closing tag 'testsuites'. (line 1, column 24)",
    );
    expect(unreadable("")).toBe("malformed XML: Start tag expected. (line 1)");
    expect(unreadable("PASS all tests")).toBe("malformed XML: char 'P' is not expected. (line 1, column 1)");
    expect(unreadable("<html><body>no tests</body></html>")).toBe(
      "not JUnit XML: no <testsuite> or <testcase> element (the root is <html>)",
    );
  });

  it("keeps 5,000 of 6,000 test cases, the failures first, and counts them all", () => {
    const cases = Array.from({ length: 6_000 }, (_, i) =>
      i === 10 || i === 5_999
        ? `<testcase name="t${i}"><failure message="bad ${i}"/></testcase>`
        : `<testcase name="t${i}"/>`,
    );
    const r = readJUnit(`<testsuites><testsuite name="big">${cases.join("")}</testsuite></testsuites>`);
    expect(MAX_KEPT_TESTS).toBe(5_000);
    expect(r.counts).toEqual({ tests: 6_000, passed: 5_998, failed: 2, skipped: 0 });
    expect(r.tests).toHaveLength(5_000);
    expect(r.tests.slice(0, 4).map((t) => [t.name, t.status, t.message])).toEqual([
      ["t10", "failed", "bad 10"],
      ["t5999", "failed", "bad 5999"],
      ["t0", "passed", null],
      ["t1", "passed", null],
    ]);
    expect(r.tests.at(-1)?.name).toBe("t4998");
  });

  it("cuts a message over 2,000 characters", () => {
    const long = `first line\n${"x".repeat(3_000)}`;
    const r = readJUnit(`<testsuite name="s"><testcase name="t"><failure message="${long}"/></testcase></testsuite>`);
    const message = r.tests[0]?.message ?? "";
    expect(MAX_MESSAGE_CHARS).toBe(2_000);
    expect(message).toHaveLength(2_000);
    expect(message).toBe(`${long.slice(0, 1_999)}…`);
  });
});

describe("readTap on real reports", () => {
  it("reads node --test's TAP: leaf tests only, the describe as their suite, SKIP and TODO skipped", () => {
    const r = readTap(nodeTest("tap", nodeTests));
    expect(r.format).toBe("tap");
    expect(r.counts).toEqual({ tests: 6, passed: 3, failed: 1, skipped: 2 });
    // The message is the YAML diagnostic's error field.
    expect(summary(r)).toEqual(nodeExpected("one and one make two\n\n2 !== 3"));
    for (const t of r.tests) {
      expect(t.durationMs).toBeTypeOf("number");
      expect(t.durationMs).toBeGreaterThanOrEqual(0);
      expect(t.durationMs).toBeLessThan(10_000);
    }
  });

  it("reads nested subtests, and keeps a suite that failed with no failing test under it", () => {
    const r = readTap(
      nodeTest(
        "tap",
        `import { describe, it, after, test } from "node:test";
describe("hooked", () => {
  after(() => { throw new Error("cleanup broke"); });
  it("fine", () => {});
});
describe.skip("skipped suite", () => { it("inner", () => {}); });
describe("empty", () => {});
test("parent", async (t) => {
  await t.test("child", async (t) => {
    await t.test("grandchild", () => { throw new Error("deep"); });
  });
});
`,
      ),
    );
    // Suites are not tests: the skipped and the empty describe count for nothing, as in node's own
    // summary; "parent" and "child" failed because "grandchild" did, so only "grandchild" counts.
    expect(r.counts).toEqual({ tests: 3, passed: 1, failed: 2, skipped: 0 });
    expect(summary(r)).toEqual([
      { id: "hooked", name: "hooked", suite: [], file: null, status: "failed", message: "cleanup broke" },
      {
        id: "parent > child > grandchild",
        name: "grandchild",
        suite: ["parent", "child"],
        file: null,
        status: "failed",
        message: "deep",
      },
      { id: "hooked > fine", name: "fine", suite: ["hooked"], file: null, status: "passed", message: null },
    ]);
  });

  it("reads node --test's TAP of a run with no tests (a plan of 1..0) as 0 tests", () => {
    const r = readTap(nodeTest("tap", null));
    expect(r).toEqual({ format: "tap", tests: [], counts: { tests: 0, passed: 0, failed: 0, skipped: 0 } });
  });
});

describe("readTap on the shapes other tools write", () => {
  it("reads buffered subtests, a message field, a time directive and a TODO failure", () => {
    const r = readTap(`TAP version 14
ok 1 - group {
    not ok 1 - inner
      ---
      message: wrong answer
      ...
    ok 2 - other # time=12.5ms
    1..2
}
not ok 2 - unfinished # TODO later
1..2
`);
    expect(r.counts).toEqual({ tests: 3, passed: 1, failed: 1, skipped: 1 });
    expect(r.tests).toEqual([
      {
        id: "group > inner",
        file: null,
        name: "inner",
        suite: ["group"],
        status: "failed",
        durationMs: null,
        message: "wrong answer",
      },
      {
        id: "group > other",
        file: null,
        name: "other",
        suite: ["group"],
        status: "passed",
        durationMs: 12.5,
        message: null,
      },
      {
        id: "unfinished",
        file: null,
        name: "unfinished",
        suite: [],
        status: "skipped",
        durationMs: null,
        message: null,
      },
    ]);
  });

  it("reads a plan of 0 as 0 tests", () => {
    const none = { format: "tap", tests: [], counts: { tests: 0, passed: 0, failed: 0, skipped: 0 } };
    expect(readTap("1..0\n")).toEqual(none);
    expect(readTap("TAP version 13\n1..0 # SKIP nothing to run")).toEqual(none);
  });

  it("throws ReportUnreadable for text that is not TAP", () => {
    for (const text of ["", "hello world\nnot tap at all\n", "# just a comment\n", "PASS  src/a.test.ts\n"]) {
      expect(() => readTap(text)).toThrow(new ReportUnreadable("not TAP: no version line, no plan and no test points"));
    }
  });

  it("keeps 5,000 of 6,000 tests, the failures first, and counts them all", () => {
    const lines = Array.from({ length: 6_000 }, (_, i) =>
      i === 5_500 ? `not ok ${i + 1} - t${i}\n  ---\n  error: 'late'\n  ...` : `ok ${i + 1} - t${i}`,
    );
    const r = readTap(`TAP version 13\n${lines.join("\n")}\n1..6000\n`);
    expect(r.counts).toEqual({ tests: 6_000, passed: 5_999, failed: 1, skipped: 0 });
    expect(r.tests).toHaveLength(5_000);
    expect(r.tests.slice(0, 2).map((t) => [t.name, t.status, t.message])).toEqual([
      ["t5500", "failed", "late"],
      ["t0", "passed", null],
    ]);
    expect(r.tests.at(-1)?.name).toBe("t4998");
  });

  it("cuts a message over 2,000 characters", () => {
    const long = "y".repeat(2_500);
    const r = readTap(`TAP version 13\nnot ok 1 - t\n  ---\n  error: ${long}\n  ...\n1..1\n`);
    expect(r.tests[0]?.message).toBe(`${long.slice(0, 1_999)}…`);
  });
});

describe("readReport", () => {
  it("reads the format it is told", () => {
    expect(readReport("junit", "<testsuites/>").format).toBe("junit");
    expect(readReport("tap", "1..0\n").format).toBe("tap");
    expect(() => readReport("tap", "<testsuites/>")).toThrow(ReportUnreadable);
    expect(() => readReport("junit", "1..0\n")).toThrow(ReportUnreadable);
    expect(() => readReport("html" as "tap", "")).toThrow(new ReportUnreadable('unknown report format: "html"'));
  });

  it("refuses a report over the size it reads, before parsing", () => {
    const huge = "x".repeat(MAX_REPORT_CHARS + 1);
    const said = `report too large: ${MAX_REPORT_CHARS + 1} characters, more than the ${MAX_REPORT_CHARS} that are read`;
    expect(() => readJUnit(huge)).toThrow(new ReportUnreadable(said));
    expect(() => readTap(huge)).toThrow(new ReportUnreadable(said));
  });
});
