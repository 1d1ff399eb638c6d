import * as fs from "node:fs";
import { join } from "node:path";
import { canonicalRepo, isRepoName } from "@rhumbatron/core";
import git from "isomorphic-git";

/**
 * After a restore (docs/production.md, "Backup and restore"): each project's canonical main points
 * at the commit of the last generation the restored rows record. The repositories were copied after
 * the rows were read, so they hold that commit, and main may be ahead of it (a promotion after the
 * rows were read); main moves back to it. A repository that lacks the commit is reported, not
 * touched. `root` is the git folder of the installation (`<data>/git/<namespace>`).
 */
export async function pointMainsAtGenerations(
  root: string,
  mains: readonly { projectId: string; generation: number; commit: string }[],
): Promise<{ projectId: string; moved: boolean; problem?: string }[]> {
  const out: { projectId: string; moved: boolean; problem?: string }[] = [];
  for (const m of mains) {
    const repo = canonicalRepo(m.projectId);
    if (!isRepoName(repo)) throw new Error(`not a repository name: ${repo}`);
    const gitdir = join(root, repo);
    try {
      await git.readCommit({ fs, gitdir, oid: m.commit });
    } catch {
      out.push({ projectId: m.projectId, moved: false, problem: `${repo} lacks commit ${m.commit}` });
      continue;
    }
    const head = await git.resolveRef({ fs, gitdir, ref: "refs/heads/main" }).catch(() => null);
    if (head !== m.commit) await git.writeRef({ fs, gitdir, ref: "refs/heads/main", value: m.commit, force: true });
    for (const tag of await git.listTags({ fs, gitdir })) {
      const n = /^gen-(\d+)$/.exec(tag)?.[1];
      if (n !== undefined && Number(n) > m.generation) await git.deleteRef({ fs, gitdir, ref: `refs/tags/${tag}` });
    }
    out.push({ projectId: m.projectId, moved: head !== m.commit });
  }
  return out;
}
