/**
 * The parts of S3's wire format the S3 blob store needs beyond signing: user metadata as
 * `x-amz-meta-*` headers, and the XML of ListObjectsV2 and of error responses. Shared by the adapter
 * and the fake server in tests so both sides agree on one encoding.
 */

export const META_PREFIX = "x-amz-meta-";

/**
 * Metadata names become header names, which S3 lowercases and which allow only token characters:
 * `a-z 0-9 -` stay, every other character is `_` and the hex of its UTF-8 bytes (`contentType` ->
 * `content_54ype`), so names keep their case through a round trip.
 */
export function encodeMetaName(name: string): string {
  let out = "";
  for (const ch of name) {
    if (/^[a-z0-9-]$/.test(ch)) out += ch;
    else for (const b of new TextEncoder().encode(ch)) out += `_${b.toString(16).padStart(2, "0")}`;
  }
  return out;
}

export function decodeMetaName(header: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < header.length; i++) {
    const hex = header[i] === "_" ? header.slice(i + 1, i + 3) : "";
    if (/^[0-9a-f]{2}$/i.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(header.charCodeAt(i));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/**
 * Values must be visible ASCII in a header, and S3 trims and folds spaces when it signs: `%`,
 * characters outside printable ASCII, and leading, trailing or repeated spaces are percent-encoded
 * (so `text/plain; charset=utf-8` stays as it is). Decoding is `decodeURIComponent`.
 */
export function encodeMetaValue(value: string): string {
  const chars = [...value];
  return chars
    .map((ch, i) => {
      const code = ch.codePointAt(0) ?? 0;
      const edgeSpace = ch === " " && (i === 0 || i === chars.length - 1 || chars[i - 1] === " ");
      return code < 0x20 || code > 0x7e || ch === "%" || edgeSpace ? encodeURIComponent(ch) : ch;
    })
    .join("");
}

export const decodeMetaValue = (value: string): string => decodeURIComponent(value);

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

export function decodeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos);/gi, (_, e: string) => {
    const hex = /^#x/i.test(e);
    if (e[0] === "#") return String.fromCodePoint(Number.parseInt(e.slice(hex ? 2 : 1), hex ? 16 : 10));
    return ENTITIES[e.toLowerCase()] ?? "";
  });
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&${{ "&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos" }[c]};`);
}

const rawElements = (xml: string, tag: string): string[] =>
  [...xml.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))].map((m) => m[1] ?? "");
const elements = (xml: string, tag: string): string[] => rawElements(xml, tag).map(decodeXml);

/** One page of a ListObjectsV2 answer (`ListBucketResult`): its keys and the token of the next page. */
export function parseListPage(xml: string): { keys: string[]; nextToken: string | null } {
  const keys = rawElements(xml, "Contents").flatMap((c) => elements(c, "Key"));
  const truncated = elements(xml, "IsTruncated")[0] === "true";
  return { keys, nextToken: truncated ? (elements(xml, "NextContinuationToken")[0] ?? null) : null };
}

/** The `Code` and `Message` of an S3 `<Error>` body, or null when the body is not one (HEAD has none). */
export function parseErrorBody(xml: string): { code: string; message: string | null } | null {
  const code = elements(xml, "Error")[0] === undefined ? undefined : elements(xml, "Code")[0];
  return code ? { code, message: elements(xml, "Message")[0] ?? null } : null;
}
