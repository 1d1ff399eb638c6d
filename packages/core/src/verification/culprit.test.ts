import { describe, expect, it } from "vitest";
import { parseChecksFile } from "./checks-file.ts";
import { namesTestsOnce, nextPrefix, onlyTests } from "./culprit.ts";

describe("the culprit search", () => {
  it("halves the ChangeSets between the last passing and the first failing prefix until they touch", () => {
    expect(nextPrefix(0, 4)).toBe(2);
    expect(nextPrefix(2, 4)).toBe(3);
    expect(nextPrefix(2, 3)).toBeNull();
    expect(nextPrefix(0, 1)).toBeNull();
  });

  it("runs the failing tests by name: each as an argument, or one pattern that matches only them", () => {
    const names = ["adds two numbers", "math > divides (by zero)", "adds two numbers"];
    expect(onlyTests(["pytest", "{tests}"], ["a::x", "b::y"])).toEqual(["pytest", "a::x", "b::y"]);
    const [argv0, , pattern] = onlyTests(["node", "--test-name-pattern", "^{pattern}$"], names);
    expect(argv0).toBe("node");
    expect(pattern).toBe("^(?:adds two numbers|divides \\(by zero\\))$");
    const re = new RegExp(pattern ?? "");
    expect(["adds two numbers", "divides (by zero)"].every((n) => re.test(n))).toBe(true);
    expect(["adds two numbers!", "divides by zero", "math"].some((n) => re.test(n))).toBe(false);
  });

  it("a check's only command names its tests exactly once, and needs a report", () => {
    expect(namesTestsOnce(["npx", "vitest", "run", "-t", "{pattern}"])).toBe(true);
    expect(namesTestsOnce(["node", "--test-name-pattern=^{pattern}$"])).toBe(true);
    expect(namesTestsOnce(["pytest", "{tests}"])).toBe(true);
    expect(namesTestsOnce(["pytest", "--x={tests}"])).toBe(false);
    expect(namesTestsOnce(["pytest", "{tests}", "{pattern}"])).toBe(false);
    expect(namesTestsOnce(["npm", "test"])).toBe(false);
    const file = (only: string, report = "\n    report: { format: junit, path: t.xml }") =>
      parseChecksFile(`version: 1\nchecks:\n  - id: unit\n    run: [npm, test]\n    only: ${only}${report}\n`);
    expect(file("[npx, vitest, run, -t, '{pattern}']").ok).toBe(true);
    // A string command may hold the placeholder: it is not shell syntax.
    expect(file("npx vitest run -t {pattern}").ok).toBe(true);
    const problems = (r: ReturnType<typeof file>) => (r.ok ? [] : r.problems.map((p) => `${p.field}: ${p.message}`));
    expect(problems(file("[npm, test]"))).toEqual([
      "checks[0].only: name {tests} (an argument of its own) or {pattern} once, e.g. [npx, vitest, run, -t, '{pattern}']",
    ]);
    expect(problems(file("[npx, vitest, run, -t, '{pattern}']", ""))).toEqual([
      "checks[0].only: only a test check with a report runs named tests",
    ]);
  });
});
