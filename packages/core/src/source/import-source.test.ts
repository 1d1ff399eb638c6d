import { describe, expect, it } from "vitest";
import { branchName, parseImportSource } from "./import-source.ts";

describe("parseImportSource", () => {
  it("reads http(s) URLs, file:// URLs and absolute paths, keeping the URL as given", () => {
    expect(parseImportSource("https://git.example.com/team/shop.git")).toEqual({
      ok: true,
      source: { kind: "http", url: "https://git.example.com/team/shop.git" },
    });
    expect(parseImportSource("http://127.0.0.1:8080/shop.git#frag")).toEqual({
      ok: true,
      source: { kind: "http", url: "http://127.0.0.1:8080/shop.git" },
    });
    expect(parseImportSource("file:///srv/git/my%20shop.git")).toEqual({
      ok: true,
      source: { kind: "local", path: "/srv/git/my shop.git", url: "file:///srv/git/my%20shop.git" },
    });
    expect(parseImportSource(" /srv/git/shop ")).toEqual({
      ok: true,
      source: { kind: "local", path: "/srv/git/shop", url: "/srv/git/shop" },
    });
  });

  it.each([
    "ssh://git@example.com/shop.git",
    "git://example.com/shop.git",
    "git@example.com:team/shop.git",
    "shop",
    "./shop",
    "../shop",
    "//server/share/shop",
    "file://fileserver/srv/shop.git",
    "C:/repos/shop",
    "",
    "/srv/\u0000shop",
  ])("refuses %j, naming what is accepted", (from) => {
    const r = parseImportSource(from);
    expect(r.ok).toBe(false);
    if (!r.ok && from !== "/srv/\u0000shop") expect(r.message).toContain("an http:// or https:// URL, a file:// URL");
  });

  it("refuses credentials in a URL instead of dropping them, and never repeats them", () => {
    for (const from of ["https://ada:s3cret@example.com/shop.git", "https://token@example.com/shop.git"]) {
      const r = parseImportSource(from);
      expect(r).toMatchObject({
        ok: false,
        message: expect.stringContaining("the credentials field, or --username with --password-stdin"),
      });
      expect(JSON.stringify(r)).not.toMatch(/s3cret|token@/);
    }
  });
});

describe("branchName", () => {
  it("accepts what git accepts and refuses what it does not", () => {
    for (const ok of ["main", "master", "release/2026", "feature-x_1"])
      expect(branchName.safeParse(ok).success).toBe(true);
    for (const bad of [
      "a..b",
      "-x",
      "a b",
      "a~1",
      "x.lock",
      "a/",
      "/a",
      "a//b",
      ".hidden",
      "a/.b",
      "@",
      "a@{1}",
      "a:b",
    ])
      expect(branchName.safeParse(bad).success, bad).toBe(false);
  });
});
