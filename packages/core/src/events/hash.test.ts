import { describe, expect, it } from "vitest";
import { fnv1a32, sha256, toHex } from "./hash.ts";

describe("fnv1a32", () => {
  // Published FNV-1a 32-bit test vectors (Fowler/Noll/Vo reference test suite).
  it.each([
    ["", 0x811c9dc5],
    ["a", 0xe40c292c],
    ["b", 0xe70c2de5],
    ["foobar", 0xbf9cf968],
    ["chongo was here!\n", 0xd49930d5],
  ])("fnv1a32(%j)", (input, expected) => {
    expect(fnv1a32(input)).toBe(expected);
  });

  it("hashes UTF-8 bytes", () => {
    expect(fnv1a32("é")).toBe(fnv1a32(new Uint8Array([0xc3, 0xa9])));
  });
});

describe("sha256", () => {
  it("matches the FIPS 180-4 vectors", () => {
    expect(toHex(sha256(new TextEncoder().encode("abc")))).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(toHex(sha256(new Uint8Array()))).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });
});
