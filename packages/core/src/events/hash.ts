import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";

/** Small pure hashes used for routing and stable IDs; core runs anywhere, browser bundles included. */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a, 32-bit, over the UTF-8 bytes of the input. */
export function fnv1a32(input: string | Uint8Array): number {
  const bytes = typeof input === "string" ? new TextEncoder().encode(input) : input;
  let h = FNV_OFFSET;
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, FNV_PRIME) >>> 0;
  }
  return h >>> 0;
}

/** SHA-256 of bytes (from @noble/hashes: audited, pure, no platform crypto needed). */
export function sha256(data: Uint8Array): Uint8Array {
  return nobleSha256(data);
}

export function toHex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}
