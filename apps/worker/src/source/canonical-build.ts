import * as fs from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import git from "isomorphic-git";

/** The branch a canonical repository advances. */
export const MAIN = "refs/heads/main";

/**
 * A new bare repository at `gitdir` whose main is the commit `build` writes into it. Built in a
 * temporary folder and moved into place, so a crash or a failure never leaves half a repository;
 * when the repository exists already (a repeat), main's commit is returned and nothing is built.
 */
export async function buildBareRepository(
  root: string,
  gitdir: string,
  exists: boolean,
  tag: string,
  build: (tmp: string) => Promise<string>,
): Promise<{ commit: string; tree: string }> {
  if (exists) {
    const commit = await git.resolveRef({ fs, gitdir, ref: MAIN });
    return { commit, tree: (await git.readCommit({ fs, gitdir, oid: commit })).commit.tree };
  }
  await mkdir(root, { recursive: true });
  const tmp = `${gitdir}.${tag}-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  try {
    await git.init({ fs, gitdir: tmp, bare: true, defaultBranch: "main" });
    const commit = await build(tmp);
    await git.writeRef({ fs, gitdir: tmp, ref: MAIN, value: commit, force: true });
    const tree = (await git.readCommit({ fs, gitdir: tmp, oid: commit })).commit.tree;
    await fs.promises.rename(tmp, gitdir);
    return { commit, tree };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
