import { describe, expect, it } from "vitest";
import { candidateFork, canonicalRepo, isRepoName, repoNamespace, truncatePatch, workspaceFork } from "./names.ts";

const uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";

describe("repository names", () => {
  it("derive from row IDs only", () => {
    expect(repoNamespace("dev")).toBe("rhumbatron-projects-dev");
    expect(canonicalRepo(`proj_${uuid}`)).toBe(`proj_${uuid}`);
    expect(workspaceFork(`run_${uuid}`)).toBe(`ws-${uuid}`);
    expect(candidateFork("cand_0123456789abcdef")).toBe("cand-0123456789abcdef");
  });

  it.each(["proj_x", "../etc", "run_../../x", "cand_XYZ", ""])("refuses %j", (bad) => {
    expect(() => canonicalRepo(bad)).toThrow();
    expect(() => workspaceFork(bad)).toThrow();
    expect(() => candidateFork(bad)).toThrow();
    expect(isRepoName(bad)).toBe(false);
  });
});

describe("truncatePatch", () => {
  it("keeps a small patch whole", () => {
    expect(truncatePatch("a\nb\n", 10)).toEqual({ text: "a\nb\n", truncated: false, fullBytes: 4 });
  });

  it("cuts on a line boundary at the limit", () => {
    const line = `${"x".repeat(99)}\n`;
    const patch = line.repeat(10_000);
    const r = truncatePatch(patch, 512 * 1024);
    expect(r.truncated).toBe(true);
    expect(r.fullBytes).toBe(1_000_000);
    expect(r.text.length).toBe(Math.floor((512 * 1024) / 100) * 100);
    expect(r.text.endsWith("\n")).toBe(true);
  });

  it("counts bytes, not characters", () => {
    const r = truncatePatch("éé\néé\n", 6);
    expect(r).toEqual({ text: "éé\n", truncated: true, fullBytes: 10 });
  });
});
