import { execFileSync } from "node:child_process";
import { ROOT } from "./stack.ts";

/**
 * What ships, as opposed to what only tests use: test files, test worlds and fixtures (`*.testing.ts`,
 * `testing/`, `testing.ts`, `test-*.ts`, `*.contract.ts`, the fixtures package) and generated code.
 */
const TEST_SUPPORT =
  /(\.test\.tsx?$|\.testing\.ts$|\/testing\/|\/testing\.ts$|-testing\.ts$|\/test-[^/]+\.ts$|\.contract\.ts$|^packages\/fixtures\/)/;

/** The TypeScript files of apps/ and packages/ that ship, as paths from the repository's root. */
export function productFiles(): string[] {
  const listed = execFileSync("git", ["ls-files", "apps", "packages"], { cwd: ROOT, encoding: "utf8" }).split("\n");
  return listed.filter((f) => /\.tsx?$/.test(f) && !TEST_SUPPORT.test(f) && !f.includes("/generated/"));
}
