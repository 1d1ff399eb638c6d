import * as fs from "node:fs";
import git from "isomorphic-git";

/**
 * The trees of a composition (compose.ts): reading objects once, a tree as a flat path -> entry
 * map, the files two trees differ in, and writing the composed tree back, reusing every directory
 * nothing was written below.
 */
export interface Entry {
  oid: string;
  mode: string;
}
/** One path of a ChangeSet's own diff: its entry before (base) and after (theirs); absent = undefined. */
export interface Change {
  path: string;
  base?: Entry;
  theirs?: Entry;
}

export const EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
export const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
export const same = (a?: Entry, b?: Entry) => a?.oid === b?.oid && a?.mode === b?.mode;
export const isFile = (e: Entry) => e.mode === "100644" || e.mode === "100755";

/**
 * Object reads for one composition, each object read once: in a chain, one ChangeSet's result
 * tree is the next one's base.
 */
export class Objects {
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

/** Every file of a tree, and every directory's tree id. */
export async function flatten(objects: Objects, tree: string) {
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
export async function diffTrees(
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
export async function writeTree(
  gitdir: string,
  files: Map<string, Entry>,
  dirty: Set<string>,
  known: Map<string, string>,
) {
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
