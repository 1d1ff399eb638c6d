import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeMetadata,
  decodeMetaName,
  decodeMetaValue,
  encodeMetadata,
  encodeMetaName,
  encodeMetaValue,
} from "./s3-metadata.ts";

describe("S3 user metadata encoding", () => {
  it("round-trips any metadata name and value through header-safe text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", minLength: 1 }), fc.string({ unit: "binary" }), (name, value) => {
        const header = encodeMetaName(name);
        const encoded = encodeMetaValue(value);
        expect(header).toMatch(/^[a-z0-9_-]+$/); // a token, unchanged by S3's lowercasing
        expect(encoded).toMatch(/^[\x21-\x7e]?([\x21-\x7e]| (?! ))*$/); // visible ASCII, single inner spaces
        expect(encoded).not.toMatch(/ $/);
        expect(decodeMetaName(header)).toBe(name);
        expect(decodeMetaValue(encoded)).toBe(value);
        expect(decodeMetadata(encodeMetadata("k", { [name]: value }))).toEqual({ [name]: value });
      }),
    );
    expect(encodeMetaName("content-type")).toBe("content-type");
    expect(encodeMetaValue("text/plain; charset=utf-8")).toBe("text/plain; charset=utf-8");
    expect(encodeMetadata("k", { contentType: "café" })).toEqual({ content_54ype: "caf%C3%A9" });
  });

  it("keeps metadata another tool wrote as it came when it is not in this encoding", () => {
    expect(decodeMetadata({ x_zz: "100%", plain: "a b" })).toEqual({ x_zz: "100%", plain: "a b" });
    expect(decodeMetadata(undefined)).toEqual({});
    // A name that is special to plain objects stays an ordinary name.
    const proto = decodeMetadata(encodeMetadata("k", JSON.parse('{"__proto__":"x"}')));
    expect(Object.keys(proto)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
  });

  it("refuses a name or value no header can carry", () => {
    expect(() => encodeMetadata("events/x", { "": "x" })).toThrow(/metadata "" of blob events\/x cannot be stored/);
    expect(() => encodeMetadata("events/x", { note: "half a pair \ud800" })).toThrow(/cannot be stored/);
  });
});
