import { describe, expect, it } from "vitest";
import { describeCheckRules, describeChecksFileProblems, parseChecksFile, parseRequirement } from "./checks-file.ts";

const good = `version: 1
requires: [node>=20, pytest]
checks:
  - id: build
    run: npm run -s build
    prepares: true
    timeout: 120
  - id: unit
    run: [pytest, -q, --junitxml=reports/unit.xml]
    report: { format: junit, path: reports/unit.xml }
    when:
      - tiers: [medium, high]
      - paths: ["src/**"]
`;

describe("the checks file", () => {
  it("reads a valid file, commands given as a string or a list", () => {
    const r = parseChecksFile(good);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.file.checks.map((c) => [c.id, c.run])).toEqual([
      ["build", ["npm", "run", "-s", "build"]],
      ["unit", ["pytest", "-q", "--junitxml=reports/unit.xml"]],
    ]);
    expect(r.file.checks[1]?.when).toEqual([{ tiers: ["medium", "high"] }, { paths: ["src/**"] }]);
  });

  it("names the line and the field of each problem", () => {
    const text = good.replace("timeout: 120", "timeout: 5000").replace("format: junit", "format: xunit");
    const r = parseChecksFile(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => [p.line, p.field])).toEqual([
      [7, "checks[0].timeout"],
      [10, "checks[1].report.format"],
    ]);
    expect(describeChecksFileProblems(r.problems)).toMatch(
      /^\.rhumbatron\/checks\.yml:7: checks\[0\]\.timeout: at most 900 s/,
    );
  });

  it("refuses a shell string; once every check reads, a program that is neither the Sandbox's nor required, and a repeated id", () => {
    const shell = parseChecksFile("version: 1\nchecks:\n  - id: a\n    run: npm test && echo ok\n");
    expect(shell.ok).toBe(false);
    if (shell.ok) return;
    expect(shell.problems.map((p) => [p.line, p.field])).toEqual([[4, "checks[0].run"]]);
    expect(shell.problems[0]?.message).toMatch(/without a shell/);

    const r = parseChecksFile(`version: 1
checks:
  - id: a
    run: cargo test
  - id: b
    run: [pytest]
  - id: a
    run: [npm, test]
`);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => `${p.line} ${p.field}: ${p.message.slice(0, 22)}`).sort()).toEqual([
      "4 checks[0].run: cargo is neither one o",
      "6 checks[1].run: pytest is neither one ",
      "7 checks[2].id: check a is declared tw",
    ]);
    expect(
      parseChecksFile(
        "version: 1\nrequires: [cargo, pytest>=7]\nchecks:\n  - id: a\n    run: cargo test\n  - id: b\n    run: [pytest]\n",
      ).ok,
    ).toBe(true);
  });

  it("a playwright check names its test folder; tests belong to it alone, and its report is Rhumbatron's", () => {
    const pw = (extra: string) =>
      `version: 1\nchecks:\n  - id: e2e\n    procedure: playwright\n    run: [node, server.js]\n${extra}`;
    const ok = parseChecksFile(pw("    tests: e2e\n"));
    expect(ok.ok && ok.file.checks[0]).toMatchObject({ procedure: "playwright", tests: "e2e" });
    const problems = (text: string) => {
      const r = parseChecksFile(text);
      return r.ok ? [] : r.problems.map((p) => `${p.field}: ${p.message}`);
    };
    expect(problems(pw(""))).toEqual(["checks[0].tests: a playwright check names its test folder, e.g. tests: e2e"]);
    expect(problems(pw("    tests: e2e\n    report: { format: junit, path: r.xml }\n"))).toEqual([
      "checks[0].report: a playwright check's report is Rhumbatron's own (JUnit)",
    ]);
    expect(problems(good.replace("    timeout: 120\n", "    timeout: 120\n    tests: e2e\n"))).toEqual([
      "checks[0].tests: only a check with procedure: playwright has tests",
    ]);
  });

  it("says what is wrong with text that is not YAML, with its line", () => {
    const r = parseChecksFile("version: 1\nchecks:\n  - id: [unclosed\n");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems[0]?.message).toMatch(/^not valid YAML/);
    expect(r.problems[0]?.line).toBeGreaterThanOrEqual(3);
  });

  it("names the missing field where its object starts, and an unknown key by name", () => {
    const r = parseChecksFile("version: 1\nchecks:\n  - id: x\n    command: [npm, test]\n");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => [p.line, p.field])).toEqual(
      expect.arrayContaining([
        [3, "checks[0]"],
        [3, "checks[0].run"],
      ]),
    );
    expect(r.problems.some((p) => /command/.test(p.message))).toBe(true);
  });

  it("refuses an empty file, a wrong version and a file without checks", () => {
    for (const text of ["", "version: 2\nchecks: []\n", "version: 1\nchecks: []\n"]) {
      const r = parseChecksFile(text);
      expect(r.ok, text).toBe(false);
    }
  });

  it("reads a requirement's tool and lowest version", () => {
    expect(parseRequirement("node>=20")).toEqual({ tool: "node", atLeast: "20", text: "node>=20" });
    expect(parseRequirement("python3")).toEqual({ tool: "python3", atLeast: null, text: "python3" });
    expect(parseRequirement("pytest >= 7.2")?.atLeast).toBe("7.2");
    expect(parseRequirement("rm -rf /")).toBeNull();
  });

  it("says a check's when in words: every Change, only when the policy requires it, or each rule joined by or", () => {
    expect(describeCheckRules(undefined)).toBe("every Change");
    expect(describeCheckRules([])).toBe("when the policy requires it");
    expect(describeCheckRules([{ tiers: ["high", "critical"], paths: ["src/**"] }, { invariant: "billing" }])).toBe(
      "tiers: high, critical; paths: src/** or invariant: billing",
    );
  });
});
