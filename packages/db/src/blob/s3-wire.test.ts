import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeMetaName,
  decodeMetaValue,
  encodeMetaName,
  encodeMetaValue,
  escapeXml,
  parseErrorBody,
  parseListPage,
} from "./s3-wire.ts";

describe("S3 wire format", () => {
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
      }),
    );
    expect(encodeMetaName("content-type")).toBe("content-type");
    expect(encodeMetaValue("text/plain; charset=utf-8")).toBe("text/plain; charset=utf-8");
  });

  it("reads keys and the continuation token from a ListBucketResult, decoding XML entities", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>a&amp;b/</Prefix>
<KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated>
<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
<Contents><Key>a&amp;b/&lt;1&gt;&#x41;&#66;&quot;&apos;</Key><ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag><Size>1</Size></Contents>
<Contents>
  <Key>a&amp;b/2</Key><Size>1</Size>
</Contents></ListBucketResult>`;
    expect(parseListPage(xml)).toEqual({
      keys: [`a&b/<1>AB"'`, "a&b/2"],
      nextToken: "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=",
    });
    const last = xml.replace("<IsTruncated>true", "<IsTruncated>false");
    expect(parseListPage(last).nextToken).toBeNull();
    expect(parseListPage("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>").keys).toEqual([]);
    expect(escapeXml(`a&b<"'>`)).toBe("a&amp;b&lt;&quot;&apos;&gt;");
  });

  it("reads an S3 Error body", () => {
    expect(
      parseErrorBody(
        `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The resource you requested does not exist &amp; never did</Message><Resource>/b/k</Resource></Error>`,
      ),
    ).toEqual({ code: "NoSuchKey", message: "The resource you requested does not exist & never did" });
    expect(parseErrorBody("")).toBeNull();
    expect(parseErrorBody("<html>Bad Gateway</html>")).toBeNull();
  });
});
