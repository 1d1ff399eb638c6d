import * as fs from "node:fs";
import { lstat, mkdir, symlink, writeFile } from "node:fs/promises";
import { join, posix, resolve as resolvePath } from "node:path";
import { type ImportSource, parseImportSource } from "@rhumbatron/core";
import git from "isomorphic-git";

/**
 * Submodules (docs/repositories.md, Submodules). By default an import keeps a gitlink as the commit
 * id its tree names and fetches nothing. When the admin who imports allows submodules, the import
 * reads each gitlink's repository from the URL `.gitmodules` gives (the same kinds of source an
 * import accepts; a relative URL is read against the superproject's), keeps the objects the gitlink's
 * commit reaches in the canonical repository under `refs/submodules/<commit>` (so they are never
 * collected and every fork and checkout copies them), and does the same inside each submodule, a few
 * levels deep. Nothing of a submodule runs either.
 *
 * A verification checkout then writes each stored submodule commit's files where its gitlink is
 * (materializeSubmodules), so the checks see the project as `git clone --recurse-submodules` would.
 * The commit ids in the trees stay what they are: the composed tree, its Evidence and its approval
 * name the gitlinks, never the submodule's files.
 */

export const SUBMODULE_REFS = "refs/submodules/";
/** How deep submodules inside submodules are followed. */
export const SUBMODULE_MAX_DEPTH = 4;

export interface Gitlink {
  /** Where the submodule sits, from the root of its superproject. */
  path: string;
  commit: string;
}

/** One `[submodule "name"]` section of a `.gitmodules` file: its path and URL. */
export interface GitmodulesEntry {
  name: string;
  path: string;
  url: string;
}

/**
 * Reads a `.gitmodules` file (git-config syntax): each `[submodule "name"]` section's `path` and
 * `url`. Sections without both are left out; comments, other sections and other keys are ignored.
 */
export function parseGitmodules(text: string): GitmodulesEntry[] {
  const out: GitmodulesEntry[] = [];
  let current: { name: string; path?: string; url?: string } | null = null;
  const flush = () => {
    if (current?.path && current.url) out.push({ name: current.name, path: current.path, url: current.url });
  };
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const section = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]$/.exec(line);
    if (section) {
      flush();
      current =
        section[1]?.toLowerCase() === "submodule" && section[2] !== undefined
          ? { name: section[2].replace(/\\(.)/g, "$1") }
          : null;
      continue;
    }
    if (!current) continue;
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(line);
    if (!kv) continue;
    const key = kv[1]?.toLowerCase();
    let value = (kv[2] ?? "").trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (key === "path") current.path = value.replace(/\/+$/, "");
    if (key === "url") current.url = value;
  }
  flush();
  return out;
}

/**
 * A submodule's URL as an import source. An absolute one is read as any import's `from`; one
 * starting `./` or `../` is read against the superproject's source as git does (the superproject's
 * URL taken as a folder). Anything parseImportSource refuses (ssh, scp-like, git://) is refused
 * with the submodule named.
 */
export function submoduleSource(
  superproject: ImportSource,
  entry: GitmodulesEntry,
): { ok: true; source: ImportSource } | { ok: false; message: string } {
  let from = entry.url;
  if (from.startsWith("./") || from.startsWith("../")) {
    if (superproject.kind === "local") from = resolvePath(superproject.path, from);
    else {
      const base = new URL(superproject.url);
      base.pathname = `${base.pathname.replace(/\/+$/, "")}/`;
      const next = new URL(from, base);
      from = next.toString().replace(/\/$/, "");
    }
  }
  const parsed = parseImportSource(from);
  if (!parsed.ok) return { ok: false, message: `the submodule ${entry.path}'s URL ${entry.url}: ${parsed.message}` };
  return parsed;
}

/** A tree entry name a checkout may write: not empty, not `.` or `..`, not `.git`, no slash. */
const safeName = (name: string) =>
  name !== "" && name !== "." && name !== ".." && name.toLowerCase() !== ".git" && !name.includes("/");

/** Every gitlink in a tree, with its path from that tree's root. */
export async function gitlinksIn(gitdir: string, treeOid: string): Promise<Gitlink[]> {
  const out: Gitlink[] = [];
  const walk = async (oid: string, prefix: string): Promise<void> => {
    const { tree } = await git.readTree({ fs, gitdir, oid });
    for (const e of tree) {
      if (!safeName(e.path)) continue;
      const path = prefix ? `${prefix}/${e.path}` : e.path;
      if (e.type === "tree") await walk(e.oid, path);
      else if (e.type === "commit") out.push({ path, commit: e.oid });
    }
  };
  await walk(treeOid, "");
  return out;
}

/** The `.gitmodules` blob at the root of a commit's tree, read; null when there is none. */
export async function gitmodulesAt(gitdir: string, commit: string): Promise<GitmodulesEntry[] | null> {
  const { commit: c } = await git.readCommit({ fs, gitdir, oid: commit });
  const { tree } = await git.readTree({ fs, gitdir, oid: c.tree });
  const entry = tree.find((e) => e.path === ".gitmodules" && e.type === "blob");
  if (!entry) return null;
  const { blob } = await git.readBlob({ fs, gitdir, oid: entry.oid });
  return parseGitmodules(new TextDecoder().decode(blob));
}

export async function hasObject(gitdir: string, oid: string): Promise<boolean> {
  try {
    await git.readObject({ fs, gitdir, oid, format: "deflated" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Fetches what the gitlinks of `commit` (a commit of `source`, already in `gitdir`) need, and
 * theirs in turn: `fetchCommit` brings one submodule's commit and its history into `gitdir`, then
 * it is kept under refs/submodules/. `refuse` makes the error a failed import; every submodule
 * must be found, or the import fails naming it.
 */
export async function importSubmodules(
  gitdir: string,
  source: ImportSource,
  commit: string,
  fetchCommit: (source: ImportSource, commit: string, where: string) => Promise<void>,
  refuse: (message: string) => Error,
  depth = 0,
  prefix = "",
): Promise<Gitlink[]> {
  const { commit: c } = await git.readCommit({ fs, gitdir, oid: commit });
  const links = await gitlinksIn(gitdir, c.tree);
  if (links.length === 0) return [];
  if (depth >= SUBMODULE_MAX_DEPTH)
    throw refuse(`submodules are nested more than ${SUBMODULE_MAX_DEPTH} deep (at ${prefix.replace(/\/$/, "")})`);
  const entries = (await gitmodulesAt(gitdir, commit)) ?? [];
  const fetched: Gitlink[] = [];
  for (const link of links) {
    const where = `${prefix}${link.path}`;
    const entry = entries.find((e) => posix.normalize(e.path) === link.path);
    if (!entry) throw refuse(`the submodule ${where} has no entry in .gitmodules: its URL is unknown`);
    const parsed = submoduleSource(source, entry);
    if (!parsed.ok) throw refuse(parsed.message.replace(`submodule ${entry.path}'s`, `submodule ${where}'s`));
    if (!(await hasObject(gitdir, link.commit))) await fetchCommit(parsed.source, link.commit, where);
    if (!(await hasObject(gitdir, link.commit)))
      throw refuse(`the submodule ${where}'s commit ${link.commit} is not on any branch of ${parsed.source.url}`);
    await git.writeRef({ fs, gitdir, ref: `${SUBMODULE_REFS}${link.commit}`, value: link.commit, force: true });
    fetched.push({ path: where, commit: link.commit });
    fetched.push(
      ...(await importSubmodules(gitdir, parsed.source, link.commit, fetchCommit, refuse, depth + 1, `${where}/`)),
    );
  }
  return fetched;
}

/**
 * Writes into the working copy `dir` the files of each submodule commit its HEAD's gitlinks name,
 * when the repository holds that commit (an import that allowed submodules kept it), and so on
 * inside each. A gitlink whose commit is not held stays an empty folder, as after a plain
 * `git clone`; it is answered in `missing`. Nothing is staged: the files are not the superproject's.
 */
export async function materializeSubmodules(dir: string): Promise<{ written: Gitlink[]; missing: Gitlink[] }> {
  const gitdir = join(dir, ".git");
  const written: Gitlink[] = [];
  const missing: Gitlink[] = [];
  const head = await git.resolveRef({ fs, gitdir, ref: "HEAD" });
  const into = async (commit: string, prefix: string, depth: number): Promise<void> => {
    // A tree without .gitmodules has no submodule an import could have fetched: nothing to walk.
    if ((await gitmodulesAt(gitdir, commit)) === null || depth > SUBMODULE_MAX_DEPTH) return;
    const { commit: c } = await git.readCommit({ fs, gitdir, oid: commit });
    for (const link of await gitlinksIn(gitdir, c.tree)) {
      const path = `${prefix}${link.path}`;
      if (!(await hasObject(gitdir, link.commit))) {
        missing.push({ path, commit: link.commit });
        continue;
      }
      const target = join(dir, path);
      if (!(await isPlainFolderOrAbsent(dir, path))) continue;
      await mkdir(target, { recursive: true });
      const { commit: sub } = await git.readCommit({ fs, gitdir, oid: link.commit });
      await writeTreeFiles(gitdir, sub.tree, target);
      written.push({ path, commit: link.commit });
      await into(link.commit, `${path}/`, depth + 1);
    }
  };
  await into(head, "", 0);
  return { written, missing };
}

/** Whether every step of `path` under `dir` is a real folder (or absent): never write through a symlink. */
async function isPlainFolderOrAbsent(dir: string, path: string): Promise<boolean> {
  let at = dir;
  for (const part of path.split("/")) {
    at = join(at, part);
    const s = await lstat(at).catch(() => null);
    if (s === null) return true;
    if (!s.isDirectory()) return false;
  }
  return true;
}

/** Writes a tree's files under `target` (folders, executable bits, symlinks as links); gitlinks are left as folders. */
async function writeTreeFiles(gitdir: string, treeOid: string, target: string): Promise<void> {
  const { tree } = await git.readTree({ fs, gitdir, oid: treeOid });
  for (const e of tree) {
    if (!safeName(e.path)) continue;
    const at = join(target, e.path);
    if (e.type === "tree") {
      await mkdir(at, { recursive: true });
      await writeTreeFiles(gitdir, e.oid, at);
    } else if (e.type === "commit") {
      await mkdir(at, { recursive: true });
    } else if (e.type === "blob") {
      const { blob } = await git.readBlob({ fs, gitdir, oid: e.oid });
      if (e.mode === "120000") await symlink(new TextDecoder().decode(blob), at);
      else await writeFile(at, blob, { mode: e.mode === "100755" ? 0o755 : 0o644 });
    }
  }
}
