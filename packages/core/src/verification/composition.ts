import { sha256, toHex } from "../events/hash.ts";

/**
 * The composition key (docs/protocol.md, Composition onto the canonical generation): SHA-256 over the
 * project, the base generation and commit, and the ChangeSet IDs in Work Graph order, each as a
 * 4-byte big-endian length and its UTF-8 bytes (so no two different inputs encode alike). The
 * Candidate ID is `cand_` + its first 32 hex digits, so the same composition is the same Candidate.
 */
export function compositionKey(
  projectId: string,
  baseGeneration: number,
  baseCommit: string,
  changeSetIds: readonly string[],
): string {
  const enc = new TextEncoder();
  const parts: number[] = [...enc.encode("rhumbatron/composition/v1"), 0];
  for (const field of [projectId, String(baseGeneration), baseCommit, String(changeSetIds.length), ...changeSetIds]) {
    const b = enc.encode(field);
    parts.push((b.length >>> 24) & 0xff, (b.length >>> 16) & 0xff, (b.length >>> 8) & 0xff, b.length & 0xff, ...b);
  }
  return toHex(sha256(Uint8Array.from(parts)));
}

export const candidateIdFromKey = (key: string) => `cand_${key.slice(0, 32)}`;
