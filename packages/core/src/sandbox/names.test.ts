import { describe, expect, it } from "vitest";
import { DomainError } from "../errors.ts";
import { dirForAgentRun, dirForCandidate, isRunDirName, sandboxName, workspaceRelativePath } from "./names.ts";

const uuid = "6f1c9f8e-0000-4000-8000-000000000001";

describe("sandbox names", () => {
  it("names run directories and the per-Project Sandbox as docs/sandbox.md says", () => {
    expect(dirForAgentRun(`run_${uuid}`)).toBe(`run_${uuid}`);
    expect(dirForCandidate(`cand_${uuid}`)).toBe(`cand-${uuid}`);
    expect(sandboxName(`proj_${uuid}`)).toBe(`proj-${uuid}`);
    expect(isRunDirName(`run_${uuid}`)).toBe(true);
    expect(isRunDirName(`cand-${uuid}`)).toBe(true);
  });

  it("refuses IDs that are not of the named kind or could escape a directory", () => {
    for (const bad of ["cand_1", "run_", "run_../x", "run_a/b", "run_.hidden", "", `task_${uuid}`]) {
      expect(() => dirForAgentRun(bad)).toThrow(DomainError);
    }
    expect(() => dirForCandidate("run_1")).toThrow(/not a Candidate ID/);
    expect(() => sandboxName("proj_../../etc")).toThrow(/not a Project ID/);
    expect(isRunDirName("..")).toBe(false);
    expect(isRunDirName("cand_1")).toBe(false);
  });

  it("keeps a command's cwd inside the workspace", () => {
    expect(workspaceRelativePath(undefined)).toBe("");
    expect(workspaceRelativePath("./packages//core/")).toBe("packages/core");
    for (const bad of ["/etc", "../x", "a/../../b", "a/.."]) {
      expect(() => workspaceRelativePath(bad)).toThrow(/inside the workspace/);
    }
  });
});
