import * as fs from "node:fs";
import git from "isomorphic-git";
import type { ConflictKind } from "./compose-merge.ts";
import { applyOp, opsOf } from "./compose-replay.ts";
import { Running } from "./compose-running.ts";
import { byPath, type Change, diffTrees, flatten, Objects, same, writeTree } from "./compose-trees.ts";
import { signature } from "./git-objects.ts";

/**
 * Composes ChangeSets by replaying each one's own diff (its start tree -> its result tree) onto a
 * running tree, path by path, with a three-way line merge. Nothing depends on finding a merge base
 * across repeated merges, so a diamond Work Graph composes like a chain, and the same inputs always
 * give the same commit. Command-line git is the oracle this is tested against; where the rules
 * below say "as git", they follow `git merge` (merge-ort). See docs/composition.md.
 *
 * The parts, one file each: compose-trees.ts (reading, diffing and writing trees), compose-replay.ts
 * (one ChangeSet's diff as ops applied to the running tree), compose-running.ts (the running tree
 * and who changed what, for the conflict report) and compose-merge.ts (the merge of one path).
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
  kind: ConflictKind;
  with: { changeSetId: string; taskKey: string }[];
}

export type ComposeResult =
  | { ok: true; commit: string; tree: string; paths: string[] }
  | { ok: false; conflicts: ComposeConflict[] };

/**
 * Composes `sets` in the given (Work Graph) order onto `onto` and writes one commit whose only
 * parent is `onto`; no ref moves. When the sets change nothing relative to `onto`, the result is
 * `onto` itself (no empty commit is written). On a conflict, every conflicting path is reported.
 */
export async function composeChangeSets(
  gitdir: string,
  onto: string,
  sets: readonly ComposeInput[],
  o: {
    message: string;
    author: { name: string; email: string };
    at: Date;
    /** Paths everyone appends to (the base's checks file, `appendOnly`): their line conflicts keep both sides. */
    appendOnly?: (path: string) => boolean;
  },
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
      const failed = await applyOp(run, objects, base, op, ref, o.appendOnly);
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
