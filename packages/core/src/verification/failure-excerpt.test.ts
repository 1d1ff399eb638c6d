import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outputCutLine } from "../sandbox/output-cut.ts";
import { EXCERPT_MAX_LINES, EXCERPT_MAX_WIDTH, failureExcerpt, OUTPUT_CUT_NOTE } from "./failure-excerpt.ts";

/**
 * Every output here is real: made in the test itself, by running the repository's own `tsc` on a
 * file with type errors and `node --test` (TAP and spec reporters) on failing tests in a temp
 * folder, as a check's command would. Only the Sandbox's cut is applied by hand, in its own format.
 */
const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const ESC = String.fromCharCode(27);
let dir = "";

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, args, {
    cwd: dir,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: dir, NO_COLOR: "1", ...env },
  });
  expect(r.status).not.toBe(0);
  return `${r.stdout}\n${r.stderr}`;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "excerpt-"));
  writeFileSync(
    join(dir, "cart.ts"),
    [
      "export function total(prices: number[]): number {",
      '  const label: number = "sum";',
      "  return prices.reduce((a, b) => a + b, 0) + label;",
      "}",
      "export const shown: string = total([1]);",
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "cart.test.mjs"),
    [
      'import { describe, it } from "node:test";',
      'import assert from "node:assert/strict";',
      'describe("cart", () => {',
      '  it("keeps its items", () => assert.ok(true));',
      '  it("counts each quantity", () => assert.equal(2 * 3, 5));',
      '  it("refuses an empty cart", () => { throw new Error("no stock for sku-1"); });',
      "});",
      "",
    ].join("\n"),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("failureExcerpt on real tool output", () => {
  it("TypeScript: the compiler's first error line first, then the next", () => {
    const out = run([TSC, "--noEmit", "--strict", "cart.ts"]);
    const e = failureExcerpt(out);
    expect(e[0]).toBe("cart.ts(2,9): error TS2322: Type 'string' is not assignable to type 'number'.");
    expect(e[1]).toBe("cart.ts(5,14): error TS2322: Type 'number' is not assignable to type 'string'.");
    expect(e).toHaveLength(2);
  });

  it("TypeScript pretty and coloured: the error line without colour codes or the source snippet", () => {
    const out = run([TSC, "--noEmit", "--strict", "--pretty", "cart.ts"], { FORCE_COLOR: "1" });
    expect(out).toContain(`${ESC}[`);
    const e = failureExcerpt(out);
    expect(e[0]).toBe("cart.ts:2:9 - error TS2322: Type 'string' is not assignable to type 'number'.");
    expect(e.join("\n")).not.toContain(ESC);
    expect(e.join("\n")).not.toContain("~~~");
  });

  it("node --test, TAP: the failing test and its error, then the next failing test; the suite's summary is skipped", () => {
    const out = run(["--test", "--test-reporter=tap", "cart.test.mjs"]);
    expect(out).toContain("failureType: 'subtestsFailed'");
    expect(failureExcerpt(out)).toEqual([
      "not ok 2 - counts each quantity",
      "  Expected values to be strictly equal:",
      "  6 !== 5",
      "not ok 3 - refuses an empty cart",
      "  error: 'no stock for sku-1'",
    ]);
  });

  it("node --test, spec (coloured): the failing test and the error under it, no stack, no repeat from the summary", () => {
    const out = run(["--test", "--test-reporter=spec", "cart.test.mjs"], { FORCE_COLOR: "1" });
    expect(out).toContain("failing tests:");
    const e = failureExcerpt(out);
    expect(e.join("\n")).not.toContain(ESC);
    expect(e.join("\n")).not.toMatch(/^\s*at |failing tests:/m);
    expect(e.map((l) => l.replace(/ \([\d.]+ms\)$/, ""))).toEqual([
      "✖ counts each quantity",
      "  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
      "  6 !== 5",
      "✖ refuses an empty cart",
      "  Error: no stock for sku-1",
    ]);
  });

  it("a thrown error anywhere else: the generic Error line, not its stack", () => {
    const out = run(["-e", "console.log('starting the build'); null.render()"]);
    const e = failureExcerpt(out);
    expect(e[0]).toMatch(/^TypeError: Cannot read properties of null/);
    expect(e.join("\n")).not.toMatch(/^\s*at /m);
  });

  it("npm's own lines are never picked", () => {
    const out =
      "\n> shop@1.0.0 build\n> tsc\n\nnpm ERR! code 2\nnpm ERR! Lifecycle script `build` failed\nnpm error code 2\n";
    expect(failureExcerpt(out)).toEqual(["> shop@1.0.0 build", "> tsc"]);
  });

  it("nothing recognisable: the last non-empty lines, bounded in count and width", () => {
    const lines = Array.from({ length: 20 }, (_, i) => `step ${i} ${"x".repeat(i === 19 ? 1000 : 3)}`);
    const e = failureExcerpt(`${lines.join("\n")}\n\n\n`);
    expect(e).toHaveLength(EXCERPT_MAX_LINES);
    expect(e[0]).toBe("step 14 xxx");
    expect(e.at(-1)).toHaveLength(EXCERPT_MAX_WIDTH);
    expect(e.at(-1)?.endsWith("…")).toBe(true);
    expect(failureExcerpt("")).toEqual([]);
  });
});

describe("failureExcerpt across a Sandbox output cut", () => {
  /** As apps/worker/src/sandbox/run-capped.ts keeps it: the first `head` and the last `tail` characters. */
  const cut = (s: string, head: number, tail: number) =>
    `${s.slice(0, head)}\n${outputCutLine(s.length - head - tail, head + tail)}\n${s.slice(s.length - tail)}`;

  let out = "";
  beforeAll(() => {
    const body = Array.from({ length: 40 }, (_, i) => `export const v${i}: number = "s${i}";`).join("\n");
    writeFileSync(join(dir, "many.ts"), `${body}\n`);
    out = run([TSC, "--noEmit", "many.ts"]);
  });

  it("the first errors were cut: says so first, and never shows the partial line after the cut", () => {
    const lines = out.split("\n");
    // The kept tail starts inside an error line: "y.ts(31,14): error TS2322: …" still reads like one, of another file.
    const tail = out.length - out.indexOf(lines[30] as string) - 3;
    const e = failureExcerpt(cut(out, 0, tail));
    expect(e[0]).toBe(OUTPUT_CUT_NOTE);
    expect(e[1]).toBe(lines[31]);
    expect(e[1]).toMatch(/^many\.ts\(32,14\): error TS2322: /);
    expect(e.some((l) => l.startsWith("y.ts(31,14)"))).toBe(false);
    expect(e.some((l) => l !== OUTPUT_CUT_NOTE && !lines.includes(l))).toBe(false);
  });

  it("the first error survived: it comes first, and the cut is named between it and the next lines", () => {
    const lines = out.split("\n");
    const e = failureExcerpt(cut(out, (lines[0] as string).length + 30, 200));
    expect(e[0]).toBe(lines[0]);
    expect(e[0]).toMatch(/^many\.ts\(1,14\): error TS2322: /);
    expect(e[1]).toBe(OUTPUT_CUT_NOTE);
    expect(e.slice(2).every((l) => lines.includes(l))).toBe(true);
  });
});
