import { describe, expect, it } from "vitest";
import { safeNextPath } from "./auth-client.ts";

describe("safeNextPath (where sign-in sends people afterwards)", () => {
  it("keeps a path on this site, with its query", () => {
    expect(safeNextPath("/settings/tokens")).toBe("/settings/tokens");
    expect(safeNextPath("/projects/p?tab=changes")).toBe("/projects/p?tab=changes");
  });

  it("sends anything else home: nothing, other sites, protocol-relative and backslash tricks, sign-in itself", () => {
    for (const next of [
      undefined,
      null,
      "",
      "https://evil.example/",
      "//evil.example",
      "/\\evil.example",
      "javascript:alert(1)",
      "/sign-in",
      "/sign-in?next=/",
    ]) {
      expect(safeNextPath(next)).toBe("/");
    }
  });
});
