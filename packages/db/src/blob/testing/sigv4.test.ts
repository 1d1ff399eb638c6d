import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { verifySigV4 } from "./sigv4.ts";

// The worked examples of AWS's "Signature Calculations for the Authorization Header (single chunk)"
// page: the fake S3 server must accept exactly what S3 accepts, independently of aws4fetch.
const credentials = {
  accessKeyId: "AKIAIOSFODNN7EXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  region: "us-east-1",
};
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const at = new Date("2013-05-24T00:05:00Z");

function request(url: string, headers: Record<string, string>): IncomingMessage {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const distinct = Object.fromEntries(Object.entries(lower).map(([k, v]) => [k, [v]]));
  return { method: "GET", url, headers: lower, headersDistinct: distinct } as unknown as IncomingMessage;
}
const auth = (signedHeaders: string, signature: string) =>
  `AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=${signedHeaders},Signature=${signature}`;

const getObject = (signature: string, extra: Record<string, string> = {}) =>
  request("/test.txt", {
    Host: "examplebucket.s3.amazonaws.com",
    Range: "bytes=0-9",
    "x-amz-content-sha256": EMPTY_SHA256,
    "x-amz-date": "20130524T000000Z",
    Authorization: auth("host;range;x-amz-content-sha256;x-amz-date", signature),
    ...extra,
  });
const GET_OBJECT_SIGNATURE = "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";

describe("verifySigV4", () => {
  it("accepts AWS's GET Object and ListObjects examples", () => {
    expect(verifySigV4(getObject(GET_OBJECT_SIGNATURE), Buffer.alloc(0), credentials, at)).toBeNull();
    const list = request("/?max-keys=2&prefix=J", {
      Host: "examplebucket.s3.amazonaws.com",
      "x-amz-content-sha256": EMPTY_SHA256,
      "x-amz-date": "20130524T000000Z",
      Authorization: auth(
        "host;x-amz-content-sha256;x-amz-date",
        "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
      ),
    });
    expect(verifySigV4(list, Buffer.alloc(0), credentials, at)).toBeNull();
  });

  it("refuses a wrong signature, secret, signed value, body, scope or time with S3's codes", () => {
    const code = (req: IncomingMessage, body = Buffer.alloc(0), creds = credentials, now = at) =>
      verifySigV4(req, body, creds, now)?.code;
    expect(code(getObject(GET_OBJECT_SIGNATURE.replace(/^f/, "e")))).toBe("SignatureDoesNotMatch");
    expect(code(getObject(GET_OBJECT_SIGNATURE), undefined, { ...credentials, secretAccessKey: "other" })).toBe(
      "SignatureDoesNotMatch",
    );
    expect(code(getObject(GET_OBJECT_SIGNATURE, { Range: "bytes=0-99" }))).toBe("SignatureDoesNotMatch");
    expect(code(getObject(GET_OBJECT_SIGNATURE), Buffer.from("x"))).toBe("XAmzContentSHA256Mismatch");
    expect(code(getObject(GET_OBJECT_SIGNATURE), undefined, { ...credentials, region: "auto" })).toBe(
      "AuthorizationHeaderMalformed",
    );
    expect(code(getObject(GET_OBJECT_SIGNATURE), undefined, { ...credentials, accessKeyId: "AKIDOTHER" })).toBe(
      "InvalidAccessKeyId",
    );
    expect(code(getObject(GET_OBJECT_SIGNATURE), undefined, credentials, new Date("2013-05-24T00:20:00Z"))).toBe(
      "RequestTimeTooSkewed",
    );
    expect(code(getObject(GET_OBJECT_SIGNATURE, { "x-amz-meta-unsigned": "1" }))).toBe("AccessDenied");
    expect(code(getObject(GET_OBJECT_SIGNATURE, { Authorization: "Bearer x" }))).toBe("AccessDenied");
  });
});
