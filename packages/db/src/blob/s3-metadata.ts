import { DomainError } from "@rhumbatron/core";

/**
 * How the S3 blob store carries a blob's metadata in S3 user metadata (`x-amz-meta-<name>: <value>`
 * headers): the SDK sends the names and values as given, so they must already be header-safe. The
 * encoding is the one the store has always written, so objects stored before it moved to the AWS SDK
 * read back the same.
 */

/**
 * Names become header names, which S3 lowercases and which allow only token characters: `a-z 0-9 -`
 * stay, every other character is `_` and the hex of its UTF-8 bytes (`contentType` ->
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
 * Values must be visible ASCII in a header, and S3 trims and folds spaces when it signs and stores:
 * `%`, characters outside printable ASCII, and leading, trailing or repeated spaces are
 * percent-encoded (so `text/plain; charset=utf-8` stays as it is, `café` travels as `caf%C3%A9`).
 * Decoding is `decodeURIComponent`.
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

/** A blob's metadata as S3 user metadata; INVALID_INPUT for a name or value no header can carry. */
export function encodeMetadata(key: string, metadata: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(metadata).map(([name, value]) => {
      try {
        if (name === "") throw new Error("empty name");
        return [encodeMetaName(name), encodeMetaValue(value)];
      } catch {
        throw new DomainError("INVALID_INPUT", `metadata ${JSON.stringify(name)} of blob ${key} cannot be stored`);
      }
    }),
  );
}

/** S3 user metadata (names lowercased, without `x-amz-meta-`) back to the blob's metadata. */
export function decodeMetadata(stored: Record<string, string> | undefined): Record<string, string> {
  // fromEntries makes own properties, so a name such as `__proto__` is a name like any other.
  return Object.fromEntries(
    Object.entries(stored ?? {}).map(([name, value]) => {
      try {
        return [decodeMetaName(name), decodeMetaValue(value)];
      } catch {
        return [name, value]; // written by another tool: keep it as it came
      }
    }),
  );
}
