import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { copyFile, cp, mkdir, readdir, rename, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import git from "isomorphic-git";

/**
 * Git plumbing on bare repositories with isomorphic-git. Moving commits between repositories of
 * one namespace copies object files (content-addressed, so a copy is idempotent and never clobbers)
 * and then moves a ref with a fast-forward check: no network transport is needed on one host.
 */
export interface Identity {
  name: string;
  email: string;
}

export const SYSTEM_AUTHOR: Identity = { name: "Rhumbatron", email: "rhumbatron@localhost" };

export function signature(who: Identity, at: Date) {
  return { name: who.name, email: who.email, timestamp: Math.floor(at.getTime() / 1000), timezoneOffset: 0 };
}

/** Writes a flat path -> content map as nested trees; returns the root tree oid. */
export async function writeFilesAsTree(gitdir: string, files: ReadonlyMap<string, Uint8Array>): Promise<string> {
  interface Dir {
    files: Map<string, string>;
    dirs: Map<string, Dir>;
  }
  const root: Dir = { files: new Map(), dirs: new Map() };
  for (const [path, content] of files) {
    const parts = path.split("/");
    let d = root;
    for (const p of parts.slice(0, -1)) {
      let next = d.dirs.get(p);
      if (!next) {
        next = { files: new Map(), dirs: new Map() };
        d.dirs.set(p, next);
      }
      d = next;
    }
    d.files.set(parts.at(-1) as string, await git.writeBlob({ fs, gitdir, blob: content }));
  }
  const write = async (d: Dir): Promise<string> => {
    const entries = [
      ...[...d.files].map(([path, oid]) => ({ mode: "100644", path, oid, type: "blob" as const })),
      ...(await Promise.all(
        [...d.dirs].map(async ([path, sub]) => ({
          mode: "040000",
          path,
          oid: await write(sub),
          type: "tree" as const,
        })),
      )),
    ];
    return git.writeTree({ fs, gitdir, tree: entries });
  };
  return write(root);
}

/**
 * Copies the object files that `to` lacks from `from` (both are git dirs). Each file is copied
 * under a temporary name and renamed into place, so a reader of `to` (a fork being copied from
 * canonical, say) sees an object whole or not at all; a pack's index is placed after its pack.
 */
export async function copyObjects(fromGitdir: string, toGitdir: string): Promise<void> {
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(join(fromGitdir, "objects", rel), { withFileTypes: true });
    const ordered = entries.sort((a, b) => Number(a.name.endsWith(".idx")) - Number(b.name.endsWith(".idx")));
    for (const e of ordered) {
      const path = rel ? join(rel, e.name) : e.name;
      if (e.isDirectory()) {
        if (path === "info") continue;
        await walk(path);
        continue;
      }
      if (!e.isFile() || e.name.includes(".tmp-")) continue;
      const dst = join(toGitdir, "objects", path);
      if (await exists(dst)) continue;
      await mkdir(dirname(dst), { recursive: true });
      const tmp = `${dst}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
      await copyFile(join(fromGitdir, "objects", path), tmp);
      await rename(tmp, dst);
    }
  };
  await walk("");
}

/**
 * Copies a whole repository folder. An object copyObjects is still writing (`<name>.tmp-…`) is left
 * out: it may be renamed away between the listing and the copy, and it is not an object yet. The
 * filter runs before the copy looks at an entry, so a vanished temporary never fails the copy.
 */
export async function copyRepoFolder(fromGitdir: string, toDir: string): Promise<void> {
  await cp(fromGitdir, toDir, { recursive: true, filter: (src) => !basename(src).includes(".tmp-") });
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

export interface TreeEntry {
  path: string;
  oid: string;
  size: number;
  /** Whether git records the file as executable (mode 100755). */
  executable: boolean;
}

/** Every file of a commit's tree with its blob id and size. */
export async function listFiles(gitdir: string, commit: string): Promise<TreeEntry[]> {
  const out: TreeEntry[] = [];
  const walkTree = async (treeOid: string, prefix: string) => {
    const { tree } = await git.readTree({ fs, gitdir, oid: treeOid });
    for (const e of tree) {
      const path = prefix ? `${prefix}/${e.path}` : e.path;
      if (e.type === "tree") await walkTree(e.oid, path);
      else if (e.type === "blob") {
        const { blob } = await git.readBlob({ fs, gitdir, oid: e.oid });
        out.push({ path, oid: e.oid, size: blob.length, executable: e.mode === "100755" });
      }
    }
  };
  const { commit: c } = await git.readCommit({ fs, gitdir, oid: commit });
  await walkTree(c.tree, "");
  return out.sort((a, b) => a.path.localeCompare(b.path));
}
