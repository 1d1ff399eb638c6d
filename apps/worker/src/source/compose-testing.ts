import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import git from "isomorphic-git";
import { type ComposeInput, composeChangeSets } from "./compose.ts";
import { signature } from "./git-objects.ts";

/** Test helpers for composition: real repositories in a temp folder, and command-line git. */
export interface File {
  content: Uint8Array;
  executable: boolean;
  /** The blob id, when the content was read from the repository. */
  oid?: string;
}
export type Files = Map<string, File>;
interface Entry {
  oid: string;
  mode: string;
}

export const AT = new Date("2026-12-01T00:00:00Z");
export const WHO = { name: "Test", email: "test@localhost" };
const enc = new TextEncoder();
const dec = new TextDecoder();
export const file = (s: string | Uint8Array, executable = false): File => ({
  content: typeof s === "string" ? enc.encode(s) : s,
  executable,
});
export const textOf = (f: File | undefined) => (f ? dec.decode(f.content) : undefined);
export const filesOf = (layout: Record<string, string>): Files =>
  new Map(Object.entries(layout).map(([p, s]) => [p, file(s)]));

export async function tempRepo() {
  const root = await mkdtemp(join(tmpdir(), "rh-compose-"));
  const gitdir = join(root, "repo.git");
  await git.init({ fs, dir: gitdir, bare: true, defaultBranch: "main" });
  return { gitdir, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/**
 * Objects never change, so these helpers remember what they read and wrote by key: the property
 * test builds every Work Graph twice and would otherwise spend its time in object I/O.
 */
const remembered = new Map<string, Promise<unknown>>();
function remember<T>(key: string, f: () => Promise<T>): Promise<T> {
  if (!remembered.has(key)) remembered.set(key, f());
  return remembered.get(key) as Promise<T>;
}

/** Every file of a tree with its mode. */
export async function entriesOf(gitdir: string, tree: string): Promise<Map<string, Entry>> {
  const walk = async (oid: string, prefix: string, out: Map<string, Entry>) => {
    for (const e of (await git.readTree({ fs, gitdir, oid })).tree) {
      if (e.type === "tree") await walk(e.oid, `${prefix}${e.path}/`, out);
      else out.set(prefix + e.path, { oid: e.oid, mode: e.mode });
    }
    return out;
  };
  return new Map(await remember(`${gitdir}:entries:${tree}`, () => walk(tree, "", new Map())));
}

/** Writes path -> entry as nested trees; returns the root tree id. */
export function writeEntries(gitdir: string, entries: Map<string, Entry>): Promise<string> {
  const key = `${gitdir}:tree:${JSON.stringify([...entries].sort())}`;
  return remember(key, async () => {
    const here: { mode: string; path: string; oid: string; type: "blob" | "tree" }[] = [];
    const below = new Map<string, Map<string, Entry>>();
    for (const [path, e] of entries) {
      const slash = path.indexOf("/");
      if (slash < 0) here.push({ ...e, path, type: "blob" });
      else
        below.set(path.slice(0, slash), (below.get(path.slice(0, slash)) ?? new Map()).set(path.slice(slash + 1), e));
    }
    for (const [path, sub] of below)
      here.push({ mode: "040000", path, oid: await writeEntries(gitdir, sub), type: "tree" });
    return git.writeTree({ fs, gitdir, tree: here });
  });
}

/** Writes `files` (100755 where executable) and a commit with these parents. */
export async function commitFiles(gitdir: string, files: Files, parents: string[], message = "test\n") {
  const entries = new Map<string, Entry>();
  for (const [path, f] of files) {
    const key = `${gitdir}:blob:${createHash("sha1").update(f.content).digest("hex")}`;
    const oid = f.oid ?? (await remember(key, () => git.writeBlob({ fs, gitdir, blob: f.content })));
    entries.set(path, { oid, mode: f.executable ? "100755" : "100644" });
  }
  return commitTree(gitdir, await writeEntries(gitdir, entries), parents, message);
}

export function commitTree(gitdir: string, tree: string, parents: string[], message = "test\n") {
  const sig = signature(WHO, AT);
  const commit = { message, tree, parent: parents, author: sig, committer: sig };
  return remember(`${gitdir}:commit:${JSON.stringify(commit)}`, () => git.writeCommit({ fs, gitdir, commit }));
}

/** A commit's files (a fresh map: callers edit it). */
export async function readFiles(gitdir: string, commit: string): Promise<Files> {
  const tree = await treeOf(gitdir, commit);
  const read = async () => {
    const out: Files = new Map();
    for (const [path, e] of await entriesOf(gitdir, tree)) {
      const { blob } = await git.readBlob({ fs, gitdir, oid: e.oid });
      out.set(path, { content: blob, executable: e.mode === "100755", oid: e.oid });
    }
    return out;
  };
  return new Map(await remember(`${gitdir}:files:${tree}`, read));
}

export function treeOf(gitdir: string, commit: string) {
  return remember(
    `${gitdir}:treeOf:${commit}`,
    async () => (await git.readCommit({ fs, gitdir, oid: commit })).commit.tree,
  );
}

export async function parentsOf(gitdir: string, commit: string) {
  return (await git.readCommit({ fs, gitdir, oid: commit })).commit.parent;
}

/** A Task's ChangeSet: `edit` applied to the files of `base`, committed on it. */
export async function changeSet(gitdir: string, key: string, base: string, edit: (f: Files) => void) {
  const files = await readFiles(gitdir, base);
  edit(files);
  const commit = await commitFiles(gitdir, files, [base], `${key}\n`);
  return { changeSetId: `cs-${key}`, taskKey: key, baseCommit: base, commit } satisfies ComposeInput;
}

export function compose(gitdir: string, onto: string, sets: readonly ComposeInput[]) {
  return composeChangeSets(gitdir, onto, sets, { message: "compose\n", author: WHO, at: AT });
}

/** Command-line git with no user or system configuration, so the oracle is the same everywhere. */
export function gitCli(gitdir: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", LC_ALL: "C" };
    const child = spawn("git", ["--git-dir", gitdir, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/**
 * `git merge-tree --write-tree` of two commits: git's merged tree, and the paths it reports as
 * conflicted (exit 1); empty when the merge is clean.
 */
export async function gitMerge(gitdir: string, a: string, b: string) {
  const r = await gitCli(gitdir, ["merge-tree", "--write-tree", "--name-only", "--no-messages", a, b]);
  if (r.code !== 0 && r.code !== 1) throw new Error(`git merge-tree failed (${r.code}): ${r.stderr}`);
  const lines = r.stdout.split("\n");
  const end = lines.indexOf("", 1);
  const conflicts = lines.slice(1, end < 0 ? undefined : end);
  if (r.code === 1 && conflicts.length === 0) throw new Error(`git merge-tree conflicted without paths: ${r.stdout}`);
  return { tree: lines[0] as string, conflicts: [...new Set(conflicts)].sort() };
}

/**
 * Merges commits one after another with command-line git, as `git merge` would: a fast-forward
 * when the next commit descends from what is merged so far, else a merge commit with two parents.
 * Git cannot go on after a conflict, so this stops at the first one: which commit, which paths.
 */
export async function gitMergeAll(gitdir: string, commits: readonly string[]) {
  let head = commits[0] as string;
  for (const [index, next] of commits.entries()) {
    if (index === 0 || next === head) continue;
    if (await git.isDescendent({ fs, gitdir, oid: next, ancestor: head, depth: -1 })) {
      head = next;
      continue;
    }
    const m = await gitMerge(gitdir, head, next);
    if (m.conflicts.length > 0) return { commit: head, conflict: { index, paths: m.conflicts } };
    head = await commitTree(gitdir, m.tree, [head, next], "merge\n");
  }
  return { commit: head };
}

/** A Task's edit, expressed abstractly so it applies to whatever its start tree holds. */
export type Edit =
  | { op: "add"; name: number; size: number }
  | { op: "edit"; file: number; at: number; del: number; ins: number }
  | { op: "delete"; file: number }
  | { op: "rename"; file: number; name: number }
  | { op: "chmod"; file: number };

const DIRS = ["", "lib/"];
const NAMES = ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"];

/**
 * Applies `list` to `start`. New lines are unique (`tag`.edit.line), so every diff has one
 * alignment and git's xdiff and node-diff3 cannot disagree on it. A file renamed by a Task is not
 * otherwise edited by it (and an edited file not renamed), so every rename is exact: git would
 * pair an edited rename by similarity, which the composer does not do. Renames stay in their
 * directory: git's directory rename detection would move another Task's new files along. Adds
 * and renames never create a path in `forbidden`; the paths renamed away are added to `movedAway`.
 */
export function edits(
  start: Files,
  list: readonly Edit[],
  tag: string,
  forbidden: ReadonlySet<string>,
  movedAway: Set<string>,
): Files {
  const files = new Map(start);
  const renamed = new Set<string>();
  const written = new Set<string>();
  const pick = (n: number, ok: (p: string) => boolean) => {
    const ps = [...files.keys()].filter(ok).sort();
    return ps[n % Math.max(ps.length, 1)];
  };
  list.forEach((e, k) => {
    const fresh = (n: number) => Array.from({ length: n }, (_, j) => `${tag}.${k}.${j}\n`);
    if (e.op === "add") {
      const p = `${DIRS[e.name % DIRS.length]}${NAMES[Math.floor(e.name / DIRS.length) % NAMES.length]}`;
      if (files.has(p) || forbidden.has(p)) return;
      files.set(p, file(fresh(e.size).join("")));
      written.add(p);
    } else if (e.op === "edit") {
      const p = pick(e.file, (x) => !renamed.has(x));
      const f = p === undefined ? undefined : files.get(p);
      if (p === undefined || !f) return;
      const ls = dec.decode(f.content).match(/[^\n]*\n|[^\n]+$/g) ?? [];
      ls.splice(e.at % (ls.length + 1), e.del, ...fresh(e.ins));
      files.set(p, file(ls.join(""), f.executable));
      written.add(p);
    } else if (e.op === "delete") {
      const p = pick(e.file, () => true);
      if (p !== undefined) files.delete(p);
    } else if (e.op === "rename") {
      const p = pick(e.file, (x) => !renamed.has(x) && !written.has(x));
      const to = p === undefined ? "" : `${p.slice(0, p.lastIndexOf("/") + 1)}${NAMES[e.name % NAMES.length]}`;
      const f = p === undefined ? undefined : files.get(p);
      if (p === undefined || !f || files.has(to) || forbidden.has(to)) return;
      files.delete(p);
      files.set(to, f);
      renamed.add(to);
      movedAway.add(p);
    } else {
      const p = pick(e.file, () => true);
      const f = p === undefined ? undefined : files.get(p);
      if (p !== undefined && f) files.set(p, { ...f, executable: !f.executable });
    }
  });
  return files;
}
