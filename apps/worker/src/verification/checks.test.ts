import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandResult, PlannedCheck } from "@rhumbatron/core";
import { describe, expect, it } from "vitest";
import { runCapped } from "../sandbox/run-capped.ts";
import { lastLines, readCommandCheck, testCounts } from "./checks.ts";

/**
 * Runs a real `node --test` over `source` and returns its result as the Sandbox reports one.
 * `reporter` null: node's own default for a pipe (TAP on Node 20 and 22, spec on 23 and later).
 */
function nodeTest(source: string, reporter: "tap" | "spec" | null = "tap"): CommandResult {
  const dir = mkdtempSync(join(tmpdir(), "rh-checks-"));
  writeFileSync(join(dir, "t.test.mjs"), source);
  const args = ["--test", ...(reporter ? [`--test-reporter=${reporter}`] : []), join(dir, "t.test.mjs")];
  const r = spawnSync(process.execPath, args, {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "", FORCE_COLOR: "" },
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

describe("a test check with no readable count", () => {
  const ok = (stdout: string, truncated = false): CommandResult => ({
    exitCode: 0,
    signal: null,
    stdout,
    stderr: "",
    timedOut: false,
    truncated,
    durationMs: 1,
  });

  it("reads the spec reporter's summary as well as TAP's, and node's default reporter on this Node", () => {
    const source = `${header}test("a", () => {});\ntest("b", () => {});\ntest("c", { todo: true }, () => {});\n`;
    for (const reporter of ["tap", "spec", null] as const) {
      const r = nodeTest(source, reporter);
      expect(testCounts(r.stdout), `reporter ${reporter ?? "default"}`).toEqual({
        tests: 3,
        pass: 2,
        fail: 0,
        skipped: 1,
      });
      expect(readCommandCheck(unit, r)).toMatchObject({ status: "pass", coverage: "checked_supported" });
    }
  });

  it("adds up the summaries of a command that ran node --test twice, colour codes or not", () => {
    const out =
      "# tests 2\n# pass 2\n# fail 0\n\u001b[34m\u2139 tests 3\u001b[39m\n\u001b[34m\u2139 pass 2\u001b[39m\n\u2139 fail 1\n";
    expect(testCounts(out)).toEqual({ tests: 5, pass: 4, fail: 1, skipped: 0 });
  });

  it("is a gap for every test kind when the command exits 0 having printed nothing countable", () => {
    const kinds = [
      unit,
      { ...unit, id: "targeted" as const },
      { ...unit, id: "protected-invariant-cart" as const, kind: "protected-invariant" as const },
      { ...unit, id: "security" as const, kind: "security" as const },
    ];
    for (const check of kinds) {
      expect(readCommandCheck(check, ok("built\nall good\n")), check.id).toMatchObject({
        status: "pass",
        coverage: "checked_no_signal",
        detail: expect.stringContaining("no test summary"),
      });
    }
    // A build prints no test count and needs none.
    const build: PlannedCheck = { ...unit, id: "build", kind: "build", argv: ["npm", "run", "build"] };
    expect(readCommandCheck(build, ok("built\n"))).toMatchObject({ status: "pass", coverage: "checked_supported" });
  });

  it("says so when the summary was lost to the output cap", () => {
    expect(readCommandCheck(unit, ok("x".repeat(100), true))).toMatchObject({
      coverage: "checked_no_signal",
      detail: expect.stringContaining("output cap"),
    });
  });

  it("keeps a summary printed after more output than the cap: the Sandbox keeps the start and the end", async () => {
    const r = await runCapped({
      file: process.execPath,
      args: ["-e", `process.stdout.write("s".repeat(200000) + "\\n# tests 4\\n# pass 4\\n# fail 0\\n")`],
      cwd: tmpdir(),
      env: { PATH: process.env.PATH ?? "" },
      timeoutMs: 60_000,
      maxOutputBytes: 4096,
    });
    expect(r.truncated).toBe(true);
    expect(r.stdout.startsWith("s".repeat(2048))).toBe(true);
    expect(r.stdout).toContain(`bytes cut (output cap 4096 bytes)`);
    expect(Buffer.byteLength(r.stdout)).toBeLessThan(4096 + 100);
    expect(readCommandCheck(unit, r)).toMatchObject({
      status: "pass",
      coverage: "checked_supported",
      detail: "4 passed, 0 skipped, 0 failed",
    });
  });
});
