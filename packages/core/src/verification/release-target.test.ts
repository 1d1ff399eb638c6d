import { describe, expect, it } from "vitest";
import { parseReleaseTarget, releaseTargetSchema, sameReleaseTarget } from "./release-target.ts";

describe("the release target schema", () => {
  it.each([
    [{ kind: "folder" }],
    [{ kind: "folder", path: "/srv/releases/shop" }],
    [{ kind: "webhook", url: "https://deploy.example.com/hook" }],
    [{ kind: "webhook", url: "http://127.0.0.1:8080/release" }],
    [{ kind: "none" }],
  ])("accepts %j", (target) => {
    expect(releaseTargetSchema.parse(target)).toEqual(target);
  });

  it.each([
    ["a relative path", { kind: "folder", path: "releases/shop" }, "absolute folder path"],
    ["a Windows path", { kind: "folder", path: "C:\\releases" }, "absolute folder path"],
    ["an ftp URL", { kind: "webhook", url: "ftp://example.com/x" }, "http:// or https:// URL"],
    ["a javascript: URL", { kind: "webhook", url: "javascript:alert(1)" }, "http:// or https:// URL"],
  ])("refuses %s, saying what to give", (_, target, message) => {
    const r = releaseTargetSchema.safeParse(target);
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.message).join(" ")).toContain(message);
  });

  it("reads a missing stored target as the default folder, and a broken one as INVALID_INPUT", () => {
    expect(parseReleaseTarget(null)).toEqual({ kind: "folder" });
    expect(() => parseReleaseTarget({ kind: "ftp" })).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
  });

  it("compares targets by where they release to", () => {
    expect(sameReleaseTarget({ kind: "folder" }, { kind: "folder" })).toBe(true);
    expect(sameReleaseTarget({ kind: "folder" }, { kind: "folder", path: "/srv/r" })).toBe(false);
    expect(sameReleaseTarget({ kind: "webhook", url: "https://a/" }, { kind: "webhook", url: "https://a/" })).toBe(
      true,
    );
    expect(sameReleaseTarget({ kind: "none" }, { kind: "folder" })).toBe(false);
  });
});
