import { sha256, toHex } from "./hash.ts";

/**
 * Deterministic Event IDs for Change events, so a retried step writes the same Event again and the
 * outbox ignores the repeat (docs/protocol.md, The transactional outbox; the "Event publish" row of docs/idempotency.md).
 *
 * Byte encoding (version 1), hashed with SHA-256; the ID is `evt_` + hex of the first 16 bytes:
 *
 *   "rhumbatron/event-id/v1" 0x00
 *   field(changeId) field(eventType) field(taskId) field(key)
 *
 *   field(absent)  = 0x00
 *   field(present) = 0x01, length as 4-byte big-endian unsigned, UTF-8 bytes
 *
 * Every field carries its own presence tag and length, so no two different tuples share an encoding:
 * ("a", "bc") and ("ab", "c") differ in their lengths, and an absent taskId (0x00) differs from an
 * empty one (0x01 00 00 00 00).
 */
const DOMAIN = "rhumbatron/event-id/v1";

export function encodeEventIdInput(
  changeId: string,
  eventType: string,
  taskId: string | null | undefined,
  key?: string | null,
): Uint8Array {
  const enc = new TextEncoder();
  const parts: number[] = [...enc.encode(DOMAIN), 0x00];
  for (const v of [changeId, eventType, taskId, key]) {
    if (v === null || v === undefined) {
      parts.push(0x00);
      continue;
    }
    const bytes = enc.encode(v);
    parts.push(
      0x01,
      (bytes.length >>> 24) & 0xff,
      (bytes.length >>> 16) & 0xff,
      (bytes.length >>> 8) & 0xff,
      bytes.length & 0xff,
      ...bytes,
    );
  }
  return Uint8Array.from(parts);
}

export function stableEventId(
  changeId: string,
  eventType: string,
  taskId?: string | null,
  key?: string | null,
): string {
  return `evt_${toHex(sha256(encodeEventIdInput(changeId, eventType, taskId, key)).subarray(0, 16))}`;
}

/** Project-wide facts take a random ID inside their own transaction (it runs once); the caller passes it in. */
export function randomEventId(uuid: string): string {
  return `evt_${uuid.replace(/-/g, "")}`;
}
