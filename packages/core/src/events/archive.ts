import { sha256, toHex } from "./hash.ts";

/**
 * Audit archive objects (docs/protocol.md, Consumers): gzip NDJSON at
 * `events/<day>/stream-<NN>/part-<firstMs>-<hash>.ndjson.gz`, where <day> is the UTC day
 * (YYYY-MM-DD) of the first entry's publish time, <firstMs> that time in epoch milliseconds, and
 * <hash> the first 16 hex digits of the SHA-256 of the uncompressed NDJSON. The same entries always
 * give the same key, so a redelivered batch overwrites its own object instead of adding one.
 */
export function archiveNdjson(envelopes: readonly unknown[]): Uint8Array {
  return new TextEncoder().encode(envelopes.map((e) => `${JSON.stringify(e)}\n`).join(""));
}

export function archiveKey(stream: number, firstPublishedAt: Date, ndjson: Uint8Array): string {
  const day = firstPublishedAt.toISOString().slice(0, 10);
  const hash = toHex(sha256(ndjson)).slice(0, 16);
  return `events/${day}/stream-${String(stream).padStart(2, "0")}/part-${firstPublishedAt.getTime()}-${hash}.ndjson.gz`;
}

const KEY = /^events\/(\d{4}-\d{2}-\d{2})\/stream-\d{2}\/part-\d+-[0-9a-f]{16}\.ndjson\.gz$/;

/** Whether an archive object has outlived its retention (days counted from its UTC day). */
export function archiveExpired(key: string, now: Date, retentionDays: number): boolean {
  const m = KEY.exec(key);
  if (!m?.[1]) return false;
  const dayStart = Date.parse(`${m[1]}T00:00:00Z`);
  return now.getTime() - dayStart >= (retentionDays + 1) * 86_400_000;
}
