import { diff3Merge } from "node-diff3";
import { type Entry, isFile, type Objects, same } from "./compose-trees.ts";

/**
 * The merge of one path in a composition (compose.ts): the three-way merge of its entries (file,
 * mode, absent), and of a text file's lines, with the conflict kind when they do not merge.
 */
export type ConflictKind = "content" | "delete_edit" | "add_add" | "rename" | "binary" | "mode";

/**
 * Three-way merge of one path's entries (absent = undefined); base absent means add/add. `union`:
 * the path is one everyone appends to (the checks file's `appendOnly`): where both sides changed
 * the same lines of a text file, both sides' lines are kept, ours (the earlier) first, as git's
 * `merge=union`.
 */
export async function mergeEntries(
  blobs: Objects,
  base: Entry | undefined,
  ours: Entry | undefined,
  theirs: Entry | undefined,
  union = false,
): Promise<{ entry: Entry | undefined } | { conflict: ConflictKind }> {
  if (same(ours, base)) return { entry: theirs };
  if (same(ours, theirs) || same(theirs, base)) return { entry: ours };
  if (!ours || !theirs) return { conflict: base ? "delete_edit" : "add_add" };
  const oid = await mergeBlob(blobs, base, ours, theirs, union);
  // As git: an add/add is a conflict unless a two-way merge (empty base) is clean, and a mode
  // added differently on both sides conflicts.
  if (typeof oid !== "string") return { conflict: base ? oid.conflict : "add_add" };
  const m = [base?.mode, ours.mode, theirs.mode];
  if (m[1] === m[2] || m[1] === m[0]) return { entry: { oid, mode: theirs.mode } };
  if (m[2] === m[0]) return { entry: { oid, mode: ours.mode } };
  return { conflict: base ? "mode" : "add_add" };
}

async function mergeBlob(blobs: Objects, base: Entry | undefined, ours: Entry, theirs: Entry, union: boolean) {
  if (ours.oid === theirs.oid || base?.oid === ours.oid) return theirs.oid;
  if (base?.oid === theirs.oid) return ours.oid;
  // Symlink targets and submodule commits have no lines to merge.
  if (!isFile(ours) || !isFile(theirs) || (base && !isFile(base))) return { conflict: "content" as const };
  const [o, a, b] = await Promise.all([
    base ? blobs.read(base.oid) : new Uint8Array(),
    blobs.read(ours.oid),
    blobs.read(theirs.oid),
  ]);
  if ([o, a, b].some(isBinary)) return { conflict: "binary" as const };
  const merged = mergeText(o, a, b, union);
  return merged ? blobs.write(merged) : { conflict: "content" as const };
}

/** As git: a NUL byte in the first 8000 bytes makes a file binary. */
const isBinary = (b: Uint8Array) => b.subarray(0, 8000).includes(0);

/**
 * Lines keep their "\n" (so a missing final newline is a change, as in git) and are compared as
 * bytes (latin1 round-trips any byte). node-diff3, like git's xdiff, treats hunks that touch
 * (one side's change ends on the line where the other's starts) as one conflicting region, and
 * identical changes on both sides as no conflict. Where lines repeat, its longest common
 * subsequence can align a change differently from xdiff (docs/composition.md has an example);
 * matching that would mean reimplementing xdiff.
 */
function mergeText(base: Uint8Array, ours: Uint8Array, theirs: Uint8Array, union: boolean): Uint8Array | null {
  const lines = (b: Uint8Array) =>
    Buffer.from(b)
      .toString("latin1")
      .match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const out: string[] = [];
  for (const region of diff3Merge(lines(ours), lines(base), lines(theirs), { excludeFalseConflicts: true })) {
    if (region.conflict && !union) return null;
    if (region.conflict) out.push(...region.conflict.a, ...region.conflict.b);
    else out.push(...(region.ok ?? []));
  }
  return Buffer.from(out.join(""), "latin1");
}
