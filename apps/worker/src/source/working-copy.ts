import * as fs from "node:fs";
import { join } from "node:path";
import { DomainError } from "@rhumbatron/core";
import git from "isomorphic-git";
import { MAIN } from "./canonical-build.ts";
import { composeChangeSets } from "./compose.ts";
import { describeConflict } from "./conflict-text.ts";
import { type Identity, SYSTEM_AUTHOR, signature } from "./git-objects.ts";

/**
 * What a worker does in a working copy of its own (an Agent's run folder, a verification's
 * workspace), whichever way the repositories are reached: on this disk (store.ts) or through the
 * source service (remote-store.ts). The objects a step needs are brought in first by the caller.
 */

/** One ChangeSet to compose: the repository its commit is in, read with `token`. */
export interface ComposeSource {
  repo: string;
  token: string;
  changeSetId: string;
  taskKey: string;
  baseCommit: string;
  commit: string;
}

export interface ComposeOptions {
  message: string;
  at: Date;
  who?: Identity;
  appendOnly?: (path: string) => boolean;
}

/**
 * Composes the ChangeSets (their objects already in the working copy's `.git`) onto `onto`; main
 * moves to the result and the files are checked out. A conflict is a CONFLICT error naming every
 * path, the Task that could not apply and the earlier Tasks that changed the same path.
 */
export async function composeInWorkingCopy(
  dir: string,
  onto: string,
  sources: readonly ComposeSource[],
  o: ComposeOptions,
): Promise<string> {
  const gitdir = join(dir, ".git");
  const r = await composeChangeSets(gitdir, onto, sources, {
    message: o.message,
    author: o.who ?? SYSTEM_AUTHOR,
    at: o.at,
    ...(o.appendOnly ? { appendOnly: o.appendOnly } : {}),
  });
  if (!r.ok) {
    const lines = r.conflicts.map(describeConflict);
    throw new DomainError("CONFLICT", `the ChangeSets conflict: ${lines.join("; ")}`, {
      paths: [...new Set(r.conflicts.map((c) => c.path))],
      conflicts: r.conflicts,
      lines,
    });
  }
  await git.writeRef({ fs, gitdir, ref: MAIN, value: r.commit, force: true });
  await git.checkout({ fs, dir, ref: "main", force: true });
  return r.commit;
}

/** Commits every change in the working copy; null when there is nothing to commit. */
export async function commitWorkingCopy(dir: string, message: string, who: Identity, at: Date): Promise<string | null> {
  const matrix = await git.statusMatrix({ fs, dir });
  let changed = false;
  for (const [filepath, head, workdir] of matrix) {
    if (head === 1 && workdir === 1) continue;
    changed = true;
    if (workdir === 0) await git.remove({ fs, dir, filepath });
    else await git.add({ fs, dir, filepath });
  }
  if (!changed) return null;
  const sig = signature(who, at);
  return git.commit({ fs, dir, message, author: sig, committer: sig });
}
