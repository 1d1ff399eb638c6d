import { type Finding, NOT_THE_PROJECTS, REPORTS, type Read, TIMEOUT } from "./detect-shared.ts";

/**
 * Python: pytest configured at the root (pyproject.toml's [tool.pytest…], pytest.ini, tox.ini's
 * [pytest], setup.cfg's [tool:pytest]) or test files pytest collects (test_*.py, *_test.py). One
 * check, with a JUnit report so passing needs tests that ran. No install step: the Sandbox's
 * allowlist has no pip, so the project's packages must be on the host (requires says pytest).
 */
export async function detectPython(paths: ReadonlySet<string>, read: Read): Promise<Finding | null> {
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
export function detectGo(paths: ReadonlySet<string>): Finding | null {
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
export function detectRust(paths: ReadonlySet<string>): Finding | null {
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
