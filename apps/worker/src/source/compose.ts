import * as fs from "node:fs";
import git from "isomorphic-git";
import { diff3Merge } from "node-diff3";
import { signature } from "./git-objects.ts";

/**
 * Composes ChangeSets by replaying each one's own diff (its start tree -> its result tree) onto a
 * running tree, path by path, with a three-way line merge. Nothing depends on finding a merge base
 * across repeated merges, so a diamond Work Graph composes like a chain, and the same inputs always
 * give the same commit. Command-line git is the oracle this is tested against; where the rules
 * below say "as git", they follow `git merge` (merge-ort). See docs/composition.md.
 */
export interface ComposeInput {
  changeSetId: string;
  taskKey: string;
  baseCommit: string;
  commit: string;
}

export interface ComposeConflict {
  path: string;
  changeSetId: string;
  taskKey: string;
  kind: "content" | "delete_edit" | "add_add" | "rename" | "binary" | "mode";
  with: { changeSetId: string; taskKey: string }[];
}

export type ComposeResult =
  | { ok: true; commit: string; tree: string; paths: string[] }
  | { ok: false; conflicts: ComposeConflict[] };

type Kind = ComposeConflict["kind"];
type Ref = { changeSetId: string; taskKey: string };
interface Entry {
  oid: string;
  mode: string;
}
interface Change {
  path: string;
  base?: Entry;
  theirs?: Entry;
}

const EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const same = (a?: Entry, b?: Entry) => a?.oid === b?.oid && a?.mode === b?.mode;
const isFile = (e: Entry) => e.mode === "100644" || e.mode === "100755";

/**
 * Composes `sets` in the given (Work Graph) order onto `onto` and writes one commit whose only
 * parent is `onto`; no ref moves. When the sets change nothing relative to `onto`, the result is
 * `onto` itself (no empty commit is written). On a conflict, every conflicting path is reported.
 */
export async function composeChangeSets(
  gitdir: string,
  onto: string,
  sets: readonly ComposeInput[],
  o: { message: string; author: { name: string; email: string }; at: Date },
): Promise<ComposeResult> {
  const objects = new Objects(gitdir);
  const ontoTree = await objects.treeOf(onto);
  const start = await flatten(objects, ontoTree);
  const run = new Running(start.files);
  const conflicts: ComposeConflict[] = [];
  for (const set of sets) {
    const changes: Change[] = [];
    const base = await objects.treeOf(set.baseCommit);
    await diffTrees(objects, base, await objects.treeOf(set.commit), "", changes);
    const ref = { changeSetId: set.changeSetId, taskKey: set.taskKey };
    for (const op of opsOf(changes)) {
      const failed = await applyOp(run, objects, base, op, ref);
      for (const f of failed) conflicts.push({ path: f.path, ...ref, kind: f.kind, with: run.refs(f.near) });
    }
  }
  if (conflicts.length > 0) return { ok: false, conflicts: conflicts.sort((a, b) => byPath(a.path, b.path)) };
  const paths = [...run.dirty].filter((p) => !same(run.files.get(p), start.files.get(p))).sort(byPath);
  if (paths.length === 0) return { ok: true, commit: onto, tree: ontoTree, paths };
  const tree = await writeTree(gitdir, run.files, run.dirty, start.dirs);
  const sig = signature(o.author, o.at);
  const commit = await git.writeCommit({
    fs,
    gitdir,
    commit: { message: o.message, tree, parent: [onto], author: sig, committer: sig },
  });
  return { ok: true, commit, tree, paths };
}

/** One change of a ChangeSet's own diff, with exact renames paired (a delete plus an add of one blob). */
interface Op {
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
function opsOf(changes: Change[]): Op[] {
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

interface Failure {
  path: string;
  kind: Kind;
  /** Paths whose earlier changers the conflict names. */
  near: string[];
}

/** Applies one op to the running tree; on a conflict the running tree keeps its version. */
async function applyOp(run: Running, blobs: Objects, base: string, op: Op, ref: Ref): Promise<Failure[]> {
  const fail = (kind: Kind, ...paths: string[]) => paths.map((path) => ({ path, kind, near: [...paths, op.from] }));
  if (op.kind === "add") {
    const ours = run.files.get(op.to);
    if (!ours && run.collides(op.to)) return fail("add_add", op.to);
    const r = await mergeEntries(blobs, undefined, ours, op.theirs);
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
  const r = await mergeEntries(blobs, op.base, ours, op.theirs);
  const dest = op.kind === "rename" ? op.to : at;
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

/** Three-way merge of one path's entries (absent = undefined); base absent means add/add. */
async function mergeEntries(
  blobs: Objects,
  base: Entry | undefined,
  ours: Entry | undefined,
  theirs: Entry | undefined,
): Promise<{ entry: Entry | undefined } | { conflict: Kind }> {
  if (same(ours, base)) return { entry: theirs };
  if (same(ours, theirs) || same(theirs, base)) return { entry: ours };
  if (!ours || !theirs) return { conflict: base ? "delete_edit" : "add_add" };
  const oid = await mergeBlob(blobs, base, ours, theirs);
  // As git: an add/add is a conflict unless a two-way merge (empty base) is clean, and a mode
  // added differently on both sides conflicts.
  if (typeof oid !== "string") return { conflict: base ? oid.conflict : "add_add" };
  const m = [base?.mode, ours.mode, theirs.mode];
  if (m[1] === m[2] || m[1] === m[0]) return { entry: { oid, mode: theirs.mode } };
  if (m[2] === m[0]) return { entry: { oid, mode: ours.mode } };
  return { conflict: base ? "mode" : "add_add" };
}

async function mergeBlob(blobs: Objects, base: Entry | undefined, ours: Entry, theirs: Entry) {
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
  const merged = mergeText(o, a, b);
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
function mergeText(base: Uint8Array, ours: Uint8Array, theirs: Uint8Array): Uint8Array | null {
  const lines = (b: Uint8Array) =>
    Buffer.from(b)
      .toString("latin1")
      .match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const out: string[] = [];
  for (const region of diff3Merge(lines(ours), lines(base), lines(theirs), { excludeFalseConflicts: true })) {
    if (region.conflict) return null;
    out.push(...(region.ok ?? []));
  }
  return Buffer.from(out.join(""), "latin1");
}

/**
 * Object reads for one composition, each object read once: in a chain, one ChangeSet's result
 * tree is the next one's base.
 */
class Objects {
  private readonly cache = {};
  private readonly memo = new Map<string, Promise<unknown>>();
  constructor(readonly gitdir: string) {}

  private once<T>(key: string, read: () => Promise<T>): Promise<T> {
    if (!this.memo.has(key)) this.memo.set(key, read());
    return this.memo.get(key) as Promise<T>;
  }
  treeOf(commit: string) {
    return this.once(
      `c${commit}`,
      async () => (await git.readCommit({ fs, gitdir: this.gitdir, oid: commit, cache: this.cache })).commit.tree,
    );
  }
  entries(tree: string) {
    return this.once(
      `t${tree}`,
      async () => (await git.readTree({ fs, gitdir: this.gitdir, oid: tree, cache: this.cache })).tree,
    );
  }
  read(blob: string) {
    return this.once(
      `b${blob}`,
      async () => (await git.readBlob({ fs, gitdir: this.gitdir, oid: blob, cache: this.cache })).blob,
    );
  }
  async has(tree: string, path: string): Promise<boolean> {
    const parts = path.split("/");
    let oid = tree;
    for (const [i, name] of parts.entries()) {
      const e = (await this.entries(oid)).find((x) => x.path === name);
      if (!e || i < parts.length - 1 !== (e.type === "tree")) return false;
      oid = e.oid;
    }
    return true;
  }
  write(blob: Uint8Array) {
    return git.writeBlob({ fs, gitdir: this.gitdir, blob });
  }
}

/** The tree being composed, as a flat path -> entry map, and what each ChangeSet did to it. */
class Running {
  /** Every path ever written, so unchanged directories keep their tree ids. */
  readonly dirty = new Set<string>();
  private readonly below = new Map<string, number>();
  /** Old path -> the path its file has now, for files renamed in this composition. */
  private readonly moved = new Map<string, string>();
  /** Sources of renames that conflicted, and their targets. */
  readonly lost = new Map<string, string>();
  private readonly changedBy = new Map<string, Ref[]>();

  readonly files: Map<string, Entry>;

  constructor(start: Map<string, Entry>) {
    this.files = new Map(start);
    for (const p of start.keys()) this.count(p, 1);
  }

  put(path: string, entry: Entry | undefined, ref: Ref) {
    const had = this.files.has(path);
    if (entry) this.files.set(path, entry);
    else this.files.delete(path);
    if (had !== (entry !== undefined)) this.count(path, entry ? 1 : -1);
    // A deleted file is gone for good: a file added here later is another file.
    if (!entry) for (const [old, at] of this.moved) if (at === path) this.moved.delete(old);
    this.dirty.add(path);
    this.note(path, [ref]);
  }

  move(from: string, to: string, entry: Entry | undefined, ref: Ref) {
    const followers = [...this.moved].filter(([, at]) => at === from).map(([old]) => old);
    this.note(to, this.refs([from]));
    this.put(from, undefined, ref);
    this.put(to, entry, ref);
    for (const old of [...followers, from]) this.moved.set(old, to);
  }

  /** Where a path's file is now: at the path, or where renames in this composition took it. */
  locate(path: string): string | undefined {
    if (this.files.has(path)) return path;
    const at = this.moved.get(path);
    return at !== undefined && this.files.has(at) ? at : undefined;
  }

  /**
   * Git cannot hold a file where a parent path is a file, or where files lie below it; `leaving`
   * is a file about to move away (a file may become a directory of the same name, or back).
   */
  collides(path: string, leaving?: string): boolean {
    const inside = leaving?.startsWith(`${path}/`) ? 1 : 0;
    if ((this.below.get(path) ?? 0) > inside) return true;
    for (let i = path.indexOf("/"); i > 0; i = path.indexOf("/", i + 1)) {
      const parent = path.slice(0, i);
      if (parent !== leaving && this.files.has(parent)) return true;
    }
    return false;
  }

  refs(paths: string[]): Ref[] {
    const out = new Map<string, Ref>();
    for (const p of paths) for (const r of this.changedBy.get(p) ?? []) out.set(r.changeSetId, r);
    return [...out.values()];
  }

  private note(path: string, refs: Ref[]) {
    const list = this.changedBy.get(path) ?? [];
    for (const r of refs) if (!list.some((x) => x.changeSetId === r.changeSetId)) list.push(r);
    this.changedBy.set(path, list);
  }

  private count(path: string, d: number) {
    for (let i = path.indexOf("/"); i > 0; i = path.indexOf("/", i + 1)) {
      const dir = path.slice(0, i);
      this.below.set(dir, (this.below.get(dir) ?? 0) + d);
    }
  }
}

/** Every file of a tree, and every directory's tree id. */
async function flatten(objects: Objects, tree: string) {
  const files = new Map<string, Entry>();
  const dirs = new Map<string, string>([["", tree]]);
  const walk = async (oid: string, prefix: string): Promise<void> => {
    for (const e of await objects.entries(oid)) {
      const path = prefix + e.path;
      if (e.type !== "tree") files.set(path, { oid: e.oid, mode: e.mode });
      else {
        dirs.set(path, e.oid);
        await walk(e.oid, `${path}/`);
      }
    }
  };
  await walk(tree, "");
  return { files, dirs };
}

/** The files that differ between two trees, skipping subtrees whose ids are equal. */
async function diffTrees(
  objects: Objects,
  a: string | undefined,
  b: string | undefined,
  prefix: string,
  out: Change[],
) {
  if (a === b) return;
  const read = async (oid?: string) =>
    new Map((oid ? await objects.entries(oid) : []).map((e) => [e.path, e] as const));
  const [ea, eb] = [await read(a), await read(b)];
  for (const name of new Set([...ea.keys(), ...eb.keys()])) {
    const x = ea.get(name);
    const y = eb.get(name);
    const tx = x?.type === "tree" ? x.oid : undefined;
    const ty = y?.type === "tree" ? y.oid : undefined;
    if (tx || ty) await diffTrees(objects, tx, ty, `${prefix + name}/`, out);
    const fx = x && !tx ? { oid: x.oid, mode: x.mode } : undefined;
    const fy = y && !ty ? { oid: y.oid, mode: y.mode } : undefined;
    if ((fx || fy) && !same(fx, fy)) out.push({ path: prefix + name, base: fx, theirs: fy });
  }
}

/** Writes the running tree, rewriting only directories below which a path was written. */
async function writeTree(gitdir: string, files: Map<string, Entry>, dirty: Set<string>, known: Map<string, string>) {
  const dirsOf = (p: string) => p.split("/").map((_, i, parts) => parts.slice(0, i).join("/"));
  const touched = new Set([...dirty].flatMap(dirsOf));
  const children = new Map<string, Map<string, Entry | "tree">>();
  for (const [path, e] of files) {
    const names = path.split("/");
    dirsOf(path).forEach((dir, i) => {
      const list = children.get(dir) ?? new Map();
      list.set(names[i], i === names.length - 1 ? e : "tree");
      children.set(dir, list);
    });
  }
  const write = async (dir: string): Promise<string> => {
    const reuse = known.get(dir);
    if (reuse && !touched.has(dir)) return reuse;
    const tree = [];
    for (const [name, e] of children.get(dir) ?? []) {
      if (e !== "tree") tree.push({ ...e, path: name, type: e.mode === "160000" ? "commit" : "blob" } as const);
      else
        tree.push({
          mode: "040000",
          path: name,
          oid: await write(dir ? `${dir}/${name}` : name),
          type: "tree",
        } as const);
    }
    return git.writeTree({ fs, gitdir, tree });
  };
  return write("");
}
