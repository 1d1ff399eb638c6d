import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * Checks an S3 request's AWS Signature Version 4 the way S3 does: rebuild the canonical request from
 * what arrived on the wire, the string to sign with the credential scope, and the signing key from
 * the secret, then compare signatures. Returns the S3 error to answer, or null when the request is
 * signed by `credentials`. Header-signed requests only (no presigned URLs, no chunked payloads).
 */
export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

export interface S3Failure {
  status: number;
  code: string;
  message: string;
}

const AUTH =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;_-]+), ?Signature=([0-9a-f]{64})$/;
const MAX_SKEW_MS = 15 * 60 * 1000;
const UNSIGNED = "UNSIGNED-PAYLOAD";

export function verifySigV4(
  req: IncomingMessage,
  body: Buffer,
  credentials: SigV4Credentials,
  now: Date = new Date(),
): S3Failure | null {
  const match = AUTH.exec(String(req.headers.authorization ?? ""));
  if (!match) return { status: 403, code: "AccessDenied", message: "Access Denied" };
  const [, accessKeyId, day, region, service, signedHeaderList, signature] = match as unknown as string[];
  if (accessKeyId !== credentials.accessKeyId) {
    return {
      status: 403,
      code: "InvalidAccessKeyId",
      message: "The AWS Access Key Id you provided does not exist in our records.",
    };
  }
  if (region !== credentials.region || service !== "s3") {
    return {
      status: 400,
      code: "AuthorizationHeaderMalformed",
      message: `The authorization header is malformed; the region '${region}' is wrong; expecting '${credentials.region}'`,
    };
  }
  const amzDate = String(req.headers["x-amz-date"] ?? "");
  const at = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"));
  if (!amzDate.startsWith(day as string) || Number.isNaN(at)) {
    return { status: 403, code: "AccessDenied", message: "X-Amz-Date is missing or does not match the credential" };
  }
  if (Math.abs(now.getTime() - at) > MAX_SKEW_MS) {
    return {
      status: 403,
      code: "RequestTimeTooSkewed",
      message: "The difference between the request time and the current time is too large.",
    };
  }
  const signedHeaders = (signedHeaderList as string).split(";");
  const unsigned = Object.keys(req.headers).filter((h) => h.startsWith("x-amz-") && !signedHeaders.includes(h));
  if (!signedHeaders.includes("host") || unsigned.length > 0) {
    return {
      status: 403,
      code: "AccessDenied",
      message: `There were headers present in the request which were not signed: ${unsigned.join(", ") || "host"}`,
    };
  }
  const payloadHash = String(req.headers["x-amz-content-sha256"] ?? "");
  if (payloadHash === "") {
    return {
      status: 400,
      code: "InvalidRequest",
      message: "Missing required header for this request: x-amz-content-sha256",
    };
  }
  if (payloadHash !== UNSIGNED && payloadHash !== sha256Hex(body)) {
    return {
      status: 400,
      code: "XAmzContentSHA256Mismatch",
      message: "The provided 'x-amz-content-sha256' header does not match what was computed.",
    };
  }

  const [rawPath = "/", rawQuery = ""] = (req.url ?? "/").split("?", 2);
  const canonicalRequest = [
    req.method,
    rawPath
      .split("/")
      .map((s) => uriEncode(decodeURIComponent(s)))
      .join("/"),
    canonicalQuery(rawQuery),
    `${signedHeaders.map((h) => `${h}:${headerValue(req, h)}`).join("\n")}\n`,
    signedHeaderList,
    payloadHash,
  ].join("\n");
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256Hex(canonicalRequest)].join("\n");
  let key: Buffer = hmac(`AWS4${credentials.secretAccessKey}`, day as string);
  for (const part of [region, service, "aws4_request"]) key = hmac(key, part as string);
  const expected = Buffer.from(hmac(key, stringToSign).toString("hex"));
  const given = Buffer.from(signature as string);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    return {
      status: 403,
      code: "SignatureDoesNotMatch",
      message:
        "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
    };
  }
  return null;
}

/** RFC 3986: everything but unreserved characters is percent-encoded, uppercase hex. */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function canonicalQuery(raw: string): string {
  const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, " "));
  return raw
    .split("&")
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf("=");
      const [k, v] = eq < 0 ? [pair, ""] : [pair.slice(0, eq), pair.slice(eq + 1)];
      return [uriEncode(decode(k)), uriEncode(decode(v))] as const;
    })
    .sort(([k1, v1], [k2, v2]) => (k1 < k2 ? -1 : k1 > k2 ? 1 : v1 < v2 ? -1 : v1 > v2 ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
}

/** Trimmed, inner runs of spaces folded to one; repeated headers joined with commas. */
function headerValue(req: IncomingMessage, name: string): string {
  const values = req.headersDistinct[name] ?? [];
  return values.map((v) => v.trim().replace(/\s+/g, " ")).join(",");
}

const sha256Hex = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();
