import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandResult, PlannedCheck } from "@rhumbatron/core";
import { describe, expect, it } from "vitest";
import { lastLines, type ReportReading, readCommandCheck } from "./checks.ts";
import { readReport } from "./reports.ts";

/**
 * Runs a real `node --test` over `source` with the JUnit reporter on stdout, and returns its result
 * as the Sandbox reports one beside the report as the worker reads it (reports.ts, a kept parser).
 */
function nodeTest(source: string): { r: CommandResult; report: ReportReading } {
  const dir = mkdtempSync(join(tmpdir(), "rh-checks-"));
  writeFileSync(join(dir, "t.test.mjs"), source);
  const out = spawnSync(process.execPath, ["--test", "--test-reporter=junit", join(dir, "t.test.mjs")], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "", FORCE_COLOR: "" },
  });
  const r = {
    exitCode: out.status,
    signal: out.signal,
    stdout: out.stdout,
    stderr: out.stderr,
    timedOut: false,
    truncated: false,
    durationMs: 1,
  };
  return { r, report: { report: readReport("junit", out.stdout) } };
}

const unit: PlannedCheck = {
  id: "unit",
  kind: "unit",
  timeoutSeconds: 60,
  argv: ["npm", "test"],
  report: { format: "junit" },
  reason: "t",
};
const header = `import { test } from "node:test";\nimport assert from "node:assert";\n`;
const ok = (stdout: string, truncated = false): CommandResult => ({
  exitCode: 0,
  signal: null,
  stdout,
  stderr: "",
  timedOut: false,
  truncated,
  durationMs: 1,
});

describe("lastLines", () => {
  it("keeps the last n lines, without the trailing blank ones, each cut at 500 characters", () => {
    const text = `${Array.from({ length: 60 }, (_, i) => `line ${i + 1}`).join("\n")}\n${"x".repeat(600)}\n\n\n`;
    const tail = lastLines(text, 40).split("\n");
    expect(tail).toHaveLength(40);
    expect(tail[0]).toBe("line 22");
    expect(tail.at(-1)).toBe(`${"x".repeat(500)}…`);
    expect(lastLines("one\ntwo", 40)).toBe("one\ntwo");
  });
});

describe("reading a test check by its report", () => {
  it("counts skipped and to-do tests apart from passed ones: '1 passed, 3 skipped, 0 failed'", () => {
    const { r, report } = nodeTest(
      `${header}test("a", () => {});\ntest("b", { skip: true }, () => {});\ntest("c", { skip: "later" }, () => {});\ntest("d", { todo: true }, () => {});\n`,
    );
    expect(readCommandCheck(unit, r, report)).toMatchObject({
      status: "pass",
      coverage: "checked_supported",
      detail: "1 passed, 3 skipped, 0 failed",
      metrics: { tests: 4, passed: 1, failed: 0, skipped: 3 },
    });
  });

  it("a run where every test was skipped showed nothing: a pass without a signal", () => {
    const { r, report } = nodeTest(
      `${header}test("b", { skip: true }, () => {});\ntest("c", { skip: true }, () => {});\n`,
    );
    expect(readCommandCheck(unit, r, report)).toMatchObject({
      status: "pass",
      coverage: "checked_no_signal",
      detail: "no test ran: 0 passed, 2 skipped, 0 failed",
    });
  });

  it("a failing run names its counts after the exit code, and the failing test with its message", () => {
    const { r, report } = nodeTest(
      `${header}test("a", () => {});\ntest("totals", () => assert.equal(1, 2));\ntest("c", { skip: true }, () => {});\n`,
    );
    expect(readCommandCheck(unit, r, report)).toMatchObject({
      status: "fail",
      coverage: "checked_supported",
      detail: expect.stringMatching(/^exited with 1; 1 passed, 1 skipped, 1 failed; failing: totals \(1 == 2\)$/),
    });
  });

  it("a report with a failing test fails the check even when the command exited 0", () => {
    const { report } = nodeTest(`${header}test("a", () => {});\ntest("b", () => assert.equal(1, 2));\n`);
    expect(readCommandCheck(unit, ok(""), report)).toMatchObject({
      status: "fail",
      detail: expect.stringMatching(/^exited 0, but its report has failing tests: 1 passed, 0 skipped, 1 failed/),
    });
  });

  it("is a gap when the command exits 0 and its report is missing or unreadable", () => {
    expect(readCommandCheck(unit, ok("all good\n"), { unreadable: "was not written (no file dist/x.xml)" })).toEqual({
      status: "pass",
      coverage: "checked_no_signal",
      metrics: {},
      detail: "exited 0 but its junit report was not written (no file dist/x.xml); no test is known to have run",
    });
    // A check without a report needs none: it is judged by its exit code.
    const build: PlannedCheck = {
      id: "build",
      kind: "build",
      timeoutSeconds: 60,
      argv: ["npm", "run", "build"],
      reason: "t",
    };
    expect(readCommandCheck(build, ok("built\n"))).toMatchObject({ status: "pass", coverage: "checked_supported" });
  });

  it("a timeout is an error with nothing checked, whatever the report says", () => {
    const { report } = nodeTest(`${header}test("a", () => {});\n`);
    expect(readCommandCheck(unit, { ...ok(""), timedOut: true, exitCode: null }, report)).toMatchObject({
      status: "error",
      coverage: "not_checked",
      detail: "timed out after 60 s",
    });
  });

  it("a metric check passes only with the metric printed", () => {
    const perf: PlannedCheck = {
      id: "performance",
      kind: "performance",
      timeoutSeconds: 60,
      argv: ["node", "bench.js"],
      metric: { name: "p95Ms", below: 100 },
      reason: "t",
    };
    expect(readCommandCheck(perf, ok('{"p95Ms": 42}\n'))).toMatchObject({
      status: "pass",
      coverage: "checked_supported",
      metrics: { p95Ms: 42 },
    });
    expect(readCommandCheck(perf, ok("done\n"))).toMatchObject({
      coverage: "checked_no_signal",
      detail: "the command printed no p95Ms",
    });
  });
});
