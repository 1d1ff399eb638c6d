import { type ConflictKind, mergeEntries } from "./compose-merge.ts";
import type { Ref, Running } from "./compose-running.ts";
import { byPath, type Change, EMPTY_BLOB, type Entry, type Objects } from "./compose-trees.ts";

/**
 * Replaying one ChangeSet's own diff onto the running tree (compose.ts): its changes as ops, exact
 * renames paired, then each op applied with git's rules for renames, deletes and adds, reporting
 * the paths that conflict.
 *
 * An Op is one change of that diff, with exact renames paired (a delete plus an add of one blob).
 */
export interface Op {
  kind: "delete" | "modify" | "rename" | "add";
  from: string;
  to: string;
  base?: Entry;
  theirs?: Entry;
}

/**
 * Deletes come first so a ChangeSet that turns a file into a directory can place its new files.
 * Renames pair in path order; empty files never pair, as git's merge does not treat them as
 * rename sources (every empty file is "the same").
 */
export function opsOf(changes: Change[]): Op[] {
  const sorted = [...changes].sort((a, b) => byPath(a.path, b.path));
  const renamable = (e?: Entry) => e !== undefined && e.oid !== EMPTY_BLOB && e.mode !== "160000";
  const added = new Map<string, Change[]>();
  for (const c of sorted) {
    if (c.base || !c.theirs || !renamable(c.theirs)) continue;
    added.set(c.theirs.oid, [...(added.get(c.theirs.oid) ?? []), c]);
  }
  const paired = new Set<Change>();
  const renames: Op[] = [];
  for (const c of sorted) {
    if (!c.base || c.theirs || !renamable(c.base)) continue;
    const to = added.get(c.base.oid)?.shift();
    if (!to) continue;
    paired.add(c).add(to);
    renames.push({ kind: "rename", from: c.path, to: to.path, base: c.base, theirs: to.theirs });
  }
  const rest = sorted.filter((c) => !paired.has(c));
  const of = (kind: Op["kind"], keep: (c: Change) => boolean) =>
    rest.filter(keep).map((c) => ({ kind, from: c.path, to: c.path, ...c }));
  return [
    ...of("delete", (c) => !c.theirs),
    ...of("modify", (c) => c.base !== undefined && c.theirs !== undefined),
    ...renames,
    ...of("add", (c) => !c.base),
  ];
}

export interface Failure {
  path: string;
  kind: ConflictKind;
  /** Paths whose earlier changers the conflict names. */
  near: string[];
}

/** Applies one op to the running tree; on a conflict the running tree keeps its version. */
export async function applyOp(
  run: Running,
  blobs: Objects,
  base: string,
  op: Op,
  ref: Ref,
  appendOnly: (path: string) => boolean = () => false,
): Promise<Failure[]> {
  const fail = (kind: ConflictKind, ...paths: string[]) =>
    paths.map((path) => ({ path, kind, near: [...paths, op.from] }));
  if (op.kind === "add") {
    const ours = run.files.get(op.to);
    if (!ours && run.collides(op.to)) return fail("add_add", op.to);
    const r = await mergeEntries(blobs, undefined, ours, op.theirs, appendOnly(op.to));
    if ("conflict" in r) return fail("add_add", op.to);
    run.put(op.to, r.entry, ref);
    return [];
  }
  // An earlier ChangeSet of this composition may have renamed the path: follow it, as git's
  // rename detection carries an edit on one side to the file renamed on the other.
  let at = run.locate(op.from);
  // Git sees that rename only if the ChangeSet's base lacks the target; otherwise the target is
  // another file there, and to git the source was simply deleted.
  if (at !== undefined && at !== op.from && (await blobs.has(base, at))) at = undefined;
  if (at === undefined) {
    // The file went into an earlier rename that conflicted: so does this change (as git, which
    // still sees the rename and reports only its target).
    const lost = run.lost.get(op.from);
    if (lost !== undefined) return fail("rename", lost);
    if (op.kind === "delete") return [];
    // As git: a rename whose source is gone is a rename/delete conflict, reported at the target.
    return op.kind === "modify" ? fail("delete_edit", op.from) : fail("rename", op.to);
  }
  if (at !== op.from && op.kind === "delete") return fail("rename", at);
  // Renamed to two different places: git reports the source and both targets.
  if (at !== op.from && op.kind === "rename" && at !== op.to) return fail("rename", op.from, at, op.to);
  const ours = run.files.get(at);
  const dest = op.kind === "rename" ? op.to : at;
  const r = await mergeEntries(blobs, op.base, ours, op.theirs, appendOnly(dest));
  if ("conflict" in r) return fail(r.conflict, dest);
  if (dest === at) {
    run.put(dest, r.entry, ref);
    return [];
  }
  // A move. The target may already hold a file another ChangeSet added; as git (rename/add),
  // that is a two-way merge of the two files.
  const there = run.files.get(dest);
  const placed = there ? await mergeEntries(blobs, undefined, there, r.entry) : r;
  if ("conflict" in placed || (!there && run.collides(dest, at))) {
    // As git: the source is gone all the same (it was renamed); only the target conflicts.
    run.put(at, undefined, ref);
    run.lost.set(at, dest);
    return fail("rename", dest);
  }
  run.move(at, dest, placed.entry, ref);
  return [];
}
