import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandResult, PlannedCheck } from "@rhumbatron/core";
import { describe, expect, it } from "vitest";
import { lastLines, readCommandCheck, testCounts } from "./checks.ts";

/** Runs a real `node --test` over `source` and returns its result as the Sandbox reports one. */
function nodeTest(source: string): CommandResult {
  const dir = mkdtempSync(join(tmpdir(), "rh-checks-"));
  writeFileSync(join(dir, "t.test.mjs"), source);
  const r = spawnSync(process.execPath, ["--test", "--test-reporter=tap", join(dir, "t.test.mjs")], {
    encoding: "utf8",
  });
  return {
    exitCode: r.status,
    signal: r.signal,
    stdout: r.stdout,
    stderr: r.stderr,
    timedOut: false,
    truncated: false,
    durationMs: 1,
  };
}

const unit: PlannedCheck = { id: "unit", kind: "unit", timeoutSeconds: 60, argv: ["npm", "test"], reason: "t" };
const header = `import { test } from "node:test";\nimport assert from "node:assert";\n`;

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

describe("reading a test command's counts", () => {
  it("counts skipped and to-do tests apart from passed ones: '1 passed, 3 skipped, 0 failed'", () => {
    const r = nodeTest(
      `${header}test("a", () => {});\ntest("b", { skip: true }, () => {});\ntest("c", { skip: "later" }, () => {});\ntest("d", { todo: true }, () => {});\n`,
    );
    expect(testCounts(r.stdout)).toEqual({ tests: 4, pass: 1, fail: 0, skipped: 3 });
    expect(readCommandCheck(unit, r)).toMatchObject({
      status: "pass",
      coverage: "checked_supported",
      detail: "1 passed, 3 skipped, 0 failed",
      metrics: { tests: 4, passed: 1, failed: 0, skipped: 3 },
    });
  });

  it("a run where every test was skipped showed nothing: a pass without a signal", () => {
    const r = nodeTest(`${header}test("b", { skip: true }, () => {});\ntest("c", { skip: true }, () => {});\n`);
    expect(readCommandCheck(unit, r)).toMatchObject({
      status: "pass",
      coverage: "checked_no_signal",
      detail: "no test ran: 0 passed, 2 skipped, 0 failed",
    });
  });

  it("a failing run names its counts after the exit code", () => {
    const r = nodeTest(
      `${header}test("a", () => {});\ntest("b", () => assert.equal(1, 2));\ntest("c", { skip: true }, () => {});\n`,
    );
    expect(readCommandCheck(unit, r)).toMatchObject({
      status: "fail",
      coverage: "checked_supported",
      detail: "exited with 1; 1 passed, 1 skipped, 1 failed",
    });
  });
});
