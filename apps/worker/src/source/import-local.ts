import * as fs from "node:fs";
import { join } from "node:path";
import git from "isomorphic-git";
import { exists } from "./git-objects.ts";

// History imported from a folder on this machine (a path or file:// URL) or a received push, copied
// object by object, and what every import shares: its limits, its refusals, the branch it takes.

export interface ImportLimits {
  /** The history read: over HTTP the bytes received, from a folder the objects' uncompressed bytes. */
  maxBytes: number;
  /** Files in the imported branch's head tree. */
  maxFiles: number;
  /** An HTTP request that sends nothing for this long fails (and is retried). */
  idleSeconds: number;
}

/**
 * An import that will fail the same way every time (an empty repository, a missing branch, over a
 * limit, not a repository, refused by the server): the project is failed at once, never retried.
 */
export class ImportRefused extends Error {
  override name = "ImportRefused";
}

export const mb = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;

/** The branch to import: the one asked for, or the source's HEAD branch; refused when absent or when nothing is there. */
export function pickBranch(
  where: string,
  heads: readonly string[],
  wanted: string | null,
  headBranch: string | null,
): string {
  if (heads.length === 0) throw new ImportRefused(`${where} is an empty repository: it has no branch to import`);
  const branch = wanted ?? headBranch;
  if (branch === null) throw new ImportRefused(`${where} names no default branch; give one with branch`);
  if (!heads.includes(branch)) {
    const some = [...heads].sort().slice(0, 10).join(", ");
    throw new ImportRefused(`${where} has no branch ${branch} (it has ${some}${heads.length > 10 ? ", …" : ""})`);
  }
  return branch;
}

/** The git dir of a folder: a working tree's `.git`, or the folder itself when it is bare. */
export async function localGitdir(path: string): Promise<string> {
  if (!(await exists(path))) throw new ImportRefused(`${path} does not exist on the worker's host`);
  if (await exists(join(path, ".git", "HEAD"))) return join(path, ".git");
  if ((await exists(join(path, "HEAD"))) && (await exists(join(path, "objects")))) return path;
  throw new ImportRefused(`${path} is not a git repository`);
}

/** Copies every object the branch's history reaches (commits, trees, blobs) from the folder's repository. */
export async function copyFromFolder(
  gitdir: string,
  path: string,
  wanted: string | null,
  limits: ImportLimits,
): Promise<{ commit: string; branch: string }> {
  const src = await localGitdir(path);
  const heads = await git.listBranches({ fs, gitdir: src });
  const headBranch = (await git.currentBranch({ fs, gitdir: src, fullname: false })) ?? null;
  const branch = pickBranch(path, heads, wanted, headBranch);
  return copyBranch(gitdir, src, path, branch, limits);
}

/** Copies every object `branch`'s history reaches from the repository `src` (`where` names it in a refusal). */
export async function copyBranch(
  gitdir: string,
  src: string,
  where: string,
  branch: string,
  limits: ImportLimits,
): Promise<{ commit: string; branch: string }> {
  const commit = await git.resolveRef({ fs, gitdir: src, ref: `refs/heads/${branch}` });
  await copyCommit(gitdir, src, where, commit, limits, `its branch ${branch}`);
  return { commit, branch };
}

/** Copies every object `commit`'s history reaches from the repository `src` into `gitdir`. */
export async function copyCommit(
  gitdir: string,
  src: string,
  where: string,
  commit: string,
  limits: ImportLimits,
  what = `the commit ${commit}`,
): Promise<void> {
  if (
    !(await git.readObject({ fs, gitdir: src, oid: commit, format: "deflated" }).then(
      () => true,
      () => false,
    ))
  )
    throw new ImportRefused(`${where} does not hold ${what}`);
  const seen = new Set<string>();
  const pending = [commit];
  let bytes = 0;
  while (pending.length > 0) {
    const oid = pending.pop() as string;
    if (seen.has(oid)) continue;
    seen.add(oid);
    let read: { type: string; object: Uint8Array };
    try {
      read = (await git.readObject({ fs, gitdir: src, oid, format: "content" })) as typeof read;
    } catch {
      throw new ImportRefused(`${where} lacks the object ${oid} ${what} reaches (a shallow clone?)`);
    }
    bytes += read.object.length;
    if (bytes > limits.maxBytes)
      throw new ImportRefused(`the repository is larger than ${mb(limits.maxBytes)} (source.importMaxBytes)`);
    const type = read.type as "commit" | "tree" | "blob" | "tag";
    await git.writeObject({ fs, gitdir, type, object: read.object, format: "content" });
    if (type === "commit") {
      const { commit: c } = await git.readCommit({ fs, gitdir, oid });
      pending.push(c.tree, ...c.parent);
    } else if (type === "tree") {
      const { tree } = await git.readTree({ fs, gitdir, oid });
      // A gitlink (mode 160000) names a submodule's commit: kept as an id, never fetched.
      for (const e of tree) if (e.type !== "commit") pending.push(e.oid);
    }
  }
}

/** The files in a commit's tree, counting no further than `max` + 1. */
export async function countFiles(gitdir: string, commit: string, max: number): Promise<number> {
  let n = 0;
  const walk = async (treeOid: string): Promise<void> => {
    const { tree } = await git.readTree({ fs, gitdir, oid: treeOid });
    for (const e of tree) {
      if (n > max) return;
      if (e.type === "tree") await walk(e.oid);
      else if (e.type === "blob") n++;
    }
  };
  const { commit: c } = await git.readCommit({ fs, gitdir, oid: commit });
  await walk(c.tree);
  return n;
}
