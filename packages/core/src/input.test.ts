import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  idSchema,
  NUL_MESSAGE,
  repoPathProblem,
  repoPathSchema,
  requestIdSchema,
  safeText,
  utf8Bytes,
} from "./input.ts";

describe("safeText", () => {
  it("refuses a NUL anywhere, saying so, and keeps the other string rules", () => {
    const name = safeText(10).trim().min(1);
    expect(name.parse("  ok ")).toBe("ok");
    for (const bad of ["\u0000", "a\u0000", "\u0000b", "a\u0000b"]) {
      const r = name.safeParse(bad);
      expect(r.success).toBe(false);
      expect(r.error?.issues.map((i) => i.message)).toContain(NUL_MESSAGE);
    }
    expect(name.safeParse("x".repeat(11)).success).toBe(false);
    expect(name.safeParse("   ").success).toBe(false);
    expect(name.safeParse(3).success).toBe(false);
  });

  it("accepts any other text, including other control characters and astral symbols", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 50 }), (s) => {
        expect(safeText(100).safeParse(s).success).toBe(!s.includes("\u0000"));
      }),
    );
  });
});

describe("idSchema and requestIdSchema", () => {
  it.each(["chg_0f8fad5b-d9cb-469f-a165-70867728950e", "cand_00ff", "dl_rhumbatron-event-router_k.1@x", "ten_acme"])(
    "accepts %s",
    (id) => expect(idSchema.parse(id)).toBe(id),
  );

  it.each(["", "a\u0000", "has space", "../x", "a/b", "é", "x".repeat(301), "_leading"])("refuses %j", (id) => {
    expect(idSchema.safeParse(id).success).toBe(false);
  });

  it("takes any request ID text without NUL", () => {
    expect(requestIdSchema.parse(" wishlist 1 ")).toBe("wishlist 1");
    expect(requestIdSchema.safeParse("a\u0000").success).toBe(false);
    expect(requestIdSchema.safeParse(" ").success).toBe(false);
  });
});

describe("repoPathSchema", () => {
  it.each([
    "src/index.ts",
    "a",
    ".github/workflows/ci.yml",
    ".gitignore",
    "docs/",
    "a/b.git/c",
    "x.git",
    "git/x",
    ".gitkeep",
  ])("accepts %s", (p) => expect(repoPathProblem(p)).toBeNull());

  it.each([
    ["", "give a repository path"],
    ["/etc/passwd", "is absolute"],
    ["C:/x", "is absolute"],
    ["c:x", "is absolute"],
    ["C:\\x", "backslash"],
    ["..\\..\\win", "backslash"],
    ["a\\b", "backslash"],
    ["..", "'..' segment"],
    ["../etc/passwd", "'..' segment"],
    ["a/../../b", "'..' segment"],
    ["a/..", "'..' segment"],
    ["./a", "'.' segment"],
    ["a//b", "empty segment"],
    ["a/b//", "empty segment"],
    [".git", "enters .git"],
    [".git/", "enters .git"],
    [".git/hooks/pre-commit", "enters .git"],
    [".GIT/config", "enters .git"],
    ["a/.git/b", "enters .git"],
    ["deep/er/.Git", "enters .git"],
    [".git./x", "enters .git"],
    [".git /x", "enters .git"],
    ["GIT~1/x", "enters .git"],
    ["a\u0000b", "control character"],
    ["a\nb", "control character"],
  ])("refuses %j (%s), naming the path", (p, why) => {
    const problem = repoPathProblem(p);
    expect(problem).toContain(why);
    if (p) expect(problem).toContain(JSON.stringify(p));
    const r = repoPathSchema.safeParse(p);
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toBe(problem);
  });

  it("refuses an over-long path", () => {
    expect(repoPathSchema.safeParse("a/".repeat(300)).success).toBe(false);
  });

  it("never accepts a path with a '..', '.git' or empty segment, whatever it is made of", () => {
    const segment = fc.oneof(
      fc.constantFrom("..", ".", "", ".git", ".GIT", "src", "a.ts", "C:", "x\\y"),
      fc.string({ minLength: 1, maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 6 }), (generated) => {
        const p = generated.join("/");
        const accepted = repoPathSchema.safeParse(p).success;
        // A generated segment may hold a '/' itself: the oracle reads the joined path's own segments.
        const segments = p.split("/");
        const inner = segments.slice(0, -1);
        const bad =
          segments.some((s) => s === ".." || s === "." || s.toLowerCase().replace(/[. ]+$/, "") === ".git") ||
          inner.some((s) => s === "") ||
          p === "" ||
          p.includes("\\") ||
          /^[A-Za-z]:/.test(p) ||
          // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
          /[\u0000-\u001f\u007f]/.test(p) ||
          segments.some((s) => s.toLowerCase().replace(/[. ]+$/, "") === "git~1");
        expect(accepted).toBe(!bad);
      }),
      { numRuns: 300 },
    );
  });
});

describe("utf8Bytes", () => {
  it("agrees with the UTF-8 encoder", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (s) => {
        expect(utf8Bytes(s)).toBe(new TextEncoder().encode(s).length);
      }),
    );
    expect(utf8Bytes("\ud800")).toBe(3); // a lone surrogate becomes U+FFFD
  });
});
