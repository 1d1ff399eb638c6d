import * as fs from "node:fs";
import { mkdir, realpath, rm } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import {
  DomainError,
  type ImportCredentials,
  type ImportSource,
  isRepoName,
  type RepoMode,
  type RhumbatronConfig,
} from "@rhumbatron/core";
import { checkRepoToken, type Db } from "@rhumbatron/db";
import git from "isomorphic-git";
import { buildBareRepository, MAIN } from "./canonical-build.ts";
import {
  copyObjects,
  copyRepoFolder,
  exists,
  type Identity,
  listFiles,
  SYSTEM_AUTHOR,
  signature,
  type TreeEntry,
  writeFilesAsTree,
} from "./git-objects.ts";
import { type ImportLimits, ImportRefused, importHistory, importPushedHistory } from "./import.ts";
import { type CommitDiff, diffCommits } from "./patch.ts";
import { type Gitlink, materializeSubmodules } from "./submodules.ts";
import { type ComposeOptions, type ComposeSource, commitWorkingCopy, composeInWorkingCopy } from "./working-copy.ts";

export { describeConflict } from "./conflict-text.ts";
export type { ComposeOptions, ComposeSource } from "./working-copy.ts";

/**
 * The source store (docs/agents.md, Cloning a project's source): bare repositories in one namespace folder
 * per environment, created on first use. Every access presents a repo token scoped to that repository
 * and mode; the store checks it before touching anything.
 */
export interface SourceStoreDeps {
  db: Db;
  config: RhumbatronConfig;
  now: () => Date;
  /** The namespace folder, e.g. `.data/git/rhumbatron-projects-dev`. */
  root: string;
  /**
   * Folders an import from a local path may not read (besides `root`): the data folder, which holds
   * every tenant's repositories, forks and Sandbox workspaces.
   */
  privateRoots?: readonly string[];
}

export { MAIN } from "./canonical-build.ts";

/**
 * What a worker uses of the source store, whether the repositories are on its own disk (this
 * class) or behind the source service (remote-store.ts). `gitdir` is this disk's alone.
 */
export type SourceApi = Omit<SourceStore, "gitdir">;

export class SourceStore {
  constructor(private readonly deps: SourceStoreDeps) {}

  gitdir(name: string): string {
    if (!isRepoName(name)) throw new DomainError("INVALID_INPUT", `not a repository name: ${name}`);
    return join(this.deps.root, name);
  }

  private async allow(token: string, repo: string, mode: RepoMode): Promise<string> {
    await checkRepoToken(this.deps.db, token, repo, mode, this.deps.now());
    return this.gitdir(repo);
  }

  async exists(name: string): Promise<boolean> {
    return exists(join(this.gitdir(name), "HEAD"));
  }

  /** Creates the canonical repository seeded with `files` as its first commit; a repeat returns that commit. */
  provision(
    repo: string,
    token: string,
    files: ReadonlyMap<string, Uint8Array>,
    message: string,
  ): Promise<{ commit: string; tree: string }> {
    return this.createCanonical(repo, token, "provisioning", async (tmp) => {
      const tree = await writeFilesAsTree(tmp, files);
      const sig = signature(SYSTEM_AUTHOR, this.deps.now());
      return git.writeCommit({ fs, gitdir: tmp, commit: { message, tree, parent: [], author: sig, committer: sig } });
    });
  }

  /**
   * Creates the canonical repository from another repository's history (docs/repositories.md):
   * main is the imported branch's head as it is, the same commit, every commit of its
   * history there. A failure (ImportRefused or any other) leaves nothing behind.
   */
  importRepository(
    repo: string,
    token: string,
    source: ImportSource,
    branch: string | null,
    limits: ImportLimits,
    credentials: ImportCredentials | null = null,
    submodules = false,
  ): Promise<{ commit: string; tree: string }> {
    return this.createCanonical(repo, token, "importing", async (tmp) => {
      if (source.kind === "local") await this.refusePrivate(source.path);
      const options = { allowed: submodules, refuseLocal: (path: string) => this.refusePrivate(path) };
      return (await importHistory(tmp, source, branch, limits, credentials, options)).commit;
    });
  }

  /**
   * Creates the canonical repository from a push received into `quarantine` (docs/repositories.md,
   * Pushing into an empty project), read like a local import: main is the pushed branch's head as it is.
   */
  importPushed(
    repo: string,
    token: string,
    quarantine: string,
    limits: ImportLimits,
  ): Promise<{ commit: string; tree: string }> {
    return this.createCanonical(repo, token, "importing", async (tmp) => {
      return (await importPushedHistory(tmp, quarantine, limits)).commit;
    });
  }

  /** The canonical repository `repo`, built by `build` (canonical-build.ts) unless it exists already. */
  private async createCanonical(
    repo: string,
    token: string,
    tag: string,
    build: (tmp: string) => Promise<string>,
  ): Promise<{ commit: string; tree: string }> {
    const gitdir = await this.allow(token, repo, "write");
    return buildBareRepository(this.deps.root, gitdir, await this.exists(repo), tag, build);
  }

  /** A local import must not read this server's own repositories (another tenant's among them). */
  private async refusePrivate(path: string): Promise<void> {
    const real = await realpath(path).catch(() => resolve(path));
    for (const root of [this.deps.root, ...(this.deps.privateRoots ?? [])]) {
      const own = await realpath(root).catch(() => resolve(root));
      if (real === own || real.startsWith(`${own}${sep}`))
        throw new ImportRefused(`${path} is inside this server's own data; import a repository of your own`);
    }
  }

  async head(repo: string, token: string): Promise<string> {
    const gitdir = await this.allow(token, repo, "read");
    return git.resolveRef({ fs, gitdir, ref: MAIN });
  }

  /** A commit's message and parents (a redelivered fixture knows the commit it pushed by its message). */
  async commitInfo(repo: string, token: string, oid: string): Promise<{ message: string; parents: string[] }> {
    const gitdir = await this.allow(token, repo, "read");
    const { commit } = await git.readCommit({ fs, gitdir, oid });
    return { message: commit.message, parents: commit.parent };
  }

  /**
   * Fork on first write: copies `from` to `to` unless `to` exists already. `from`'s main is read
   * before the copy and the fork's main is set to it after: a promotion may write objects and move
   * main while the files are copied, and the copy could hold the new ref without its objects.
   * Objects are only ever added (whole, by rename), so everything the earlier main reaches is there.
   */
  async fork(from: string, fromToken: string, to: string): Promise<void> {
    const src = await this.allow(fromToken, from, "read");
    const dst = this.gitdir(to);
    if (await this.exists(to)) return;
    const head = await git.resolveRef({ fs, gitdir: src, ref: MAIN });
    const tmp = `${dst}.forking-${process.pid}`;
    await rm(tmp, { recursive: true, force: true });
    await copyRepoFolder(src, tmp);
    await git.writeRef({ fs, gitdir: tmp, ref: MAIN, value: head, force: true });
    await fs.promises.rename(tmp, dst);
  }

  /** Deletes a repository by name (cleanup and sweeps derive the names from rows). */
  async delete(name: string): Promise<boolean> {
    const dir = this.gitdir(name);
    const had = await exists(dir);
    await rm(dir, { recursive: true, force: true });
    return had;
  }

  /** A working copy of `repo` at `ref` in `dir` (the agent's run directory). */
  async checkout(repo: string, token: string, dir: string, commit?: string): Promise<string> {
    const src = await this.allow(token, repo, "read");
    await mkdir(dir, { recursive: true });
    await copyRepoFolder(src, join(dir, ".git"));
    await fs.promises.writeFile(join(dir, ".git", "config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n");
    const at = commit ?? (await git.resolveRef({ fs, gitdir: join(dir, ".git"), ref: MAIN }));
    await git.writeRef({ fs, gitdir: join(dir, ".git"), ref: MAIN, value: at, force: true });
    await git.checkout({ fs, dir, ref: "main", force: true });
    return at;
  }

  /**
   * Writes the files of the submodules the repository holds into the working copy `dir`, where its
   * HEAD's gitlinks are (./submodules.ts); for a verification checkout, never for an Agent's.
   */
  materializeSubmodules(dir: string): Promise<{ written: Gitlink[]; missing: Gitlink[] }> {
    return materializeSubmodules(dir);
  }

  /**
   * Composes ChangeSets onto the working copy's `onto` commit (docs/composition.md): each one's own
   * diff replayed in order, file by file, with a three-way line merge; one commit whose parent is
   * `onto`, the same for the same inputs (working-copy.ts).
   */
  async compose(dir: string, onto: string, sources: ComposeSource[], o: ComposeOptions): Promise<string> {
    const gitdir = join(dir, ".git");
    for (const s of sources) await copyObjects(await this.allow(s.token, s.repo, "read"), gitdir);
    return composeInWorkingCopy(dir, onto, sources, o);
  }

  /** Commits every change in the working copy; null when there is nothing to commit. */
  commitAll(dir: string, message: string, who: Identity): Promise<string | null> {
    return commitWorkingCopy(dir, message, who, this.deps.now());
  }

  /** Moves `repo`'s main to the working copy's main, fast-forward only. */
  async push(dir: string, repo: string, token: string): Promise<string> {
    const gitdir = await this.allow(token, repo, "write");
    const local = join(dir, ".git");
    const next = await git.resolveRef({ fs, gitdir: local, ref: MAIN });
    const current = await git.resolveRef({ fs, gitdir, ref: MAIN });
    await copyObjects(local, gitdir);
    if (current !== next && !(await git.isDescendent({ fs, gitdir, oid: next, ancestor: current, depth: -1 }))) {
      throw new DomainError("CONFLICT", `push to ${repo} is not a fast-forward of ${current.slice(0, 12)}`);
    }
    await git.writeRef({ fs, gitdir, ref: MAIN, value: next, force: true });
    return next;
  }

  /**
   * Moves `repo`'s main back to `to`, which must be main already or one of its ancestors: only the
   * commits made on top of `to` leave main (their objects stay). Anything else is a CONFLICT and
   * main stays where it is. For a workspace fork whose lost attempt pushed work no ChangeSet records
   * (runner.ts, prepareStep); never for canonical, whose main only moves forward.
   */
  async rewind(repo: string, token: string, to: string): Promise<"already" | "rewound"> {
    const gitdir = await this.allow(token, repo, "write");
    const current = await git.resolveRef({ fs, gitdir, ref: MAIN });
    if (current === to) return "already";
    if (!(await git.isDescendent({ fs, gitdir, oid: current, ancestor: to, depth: -1 }))) {
      throw new DomainError(
        "CONFLICT",
        `${repo} main at ${current.slice(0, 12)} does not descend from ${to.slice(0, 12)}; it is not moved back`,
      );
    }
    // Checked again right before the move, as fastForward does: main is moved back only from what was checked.
    if ((await git.resolveRef({ fs, gitdir, ref: MAIN })) !== current) {
      throw new DomainError("CONFLICT", `${repo} main moved while moving it back`);
    }
    await git.writeRef({ fs, gitdir, ref: MAIN, value: to, force: true });
    return "rewound";
  }

  /**
   * A compare-and-swap of `repo`'s main from `expectedOld` to `next`, taking the objects from
   * `fromRepo` (the promoted Candidate's fork). Main must be `expectedOld`, or already `next` (a
   * repeat), and `next` must descend from it: main is never force-pushed, so no promoted commit
   * is lost.
   */
  async fastForward(
    repo: string,
    token: string,
    fromRepo: string,
    fromToken: string,
    expectedOld: string,
    next: string,
  ): Promise<"already" | "advanced"> {
    const gitdir = await this.allow(token, repo, "write");
    const current = await git.resolveRef({ fs, gitdir, ref: MAIN });
    if (current === next) return "already";
    if (current !== expectedOld) {
      throw new DomainError(
        "CONFLICT",
        `${repo} main is at ${current.slice(0, 12)}, not the expected ${expectedOld.slice(0, 12)}`,
      );
    }
    const src = await this.allow(fromToken, fromRepo, "read");
    if (!(await this.exists(fromRepo))) throw new DomainError("NOT_FOUND", `repository ${fromRepo} not found`);
    await copyObjects(src, gitdir);
    try {
      await git.readCommit({ fs, gitdir, oid: next });
    } catch {
      throw new DomainError("NOT_FOUND", `commit ${next.slice(0, 12)} is not in ${fromRepo}`);
    }
    if (!(await git.isDescendent({ fs, gitdir, oid: next, ancestor: expectedOld, depth: -1 }))) {
      throw new DomainError("CONFLICT", `${next.slice(0, 12)} does not descend from ${expectedOld.slice(0, 12)}`);
    }
    // Checked again right before the move: the caller serialises syncs, this guards the rest.
    if ((await git.resolveRef({ fs, gitdir, ref: MAIN })) !== expectedOld) {
      throw new DomainError("CONFLICT", `${repo} main moved while fast-forwarding`);
    }
    await git.writeRef({ fs, gitdir, ref: MAIN, value: next, force: true });
    return "advanced";
  }

  /**
   * Makes the annotated tag `name` on `commit` (refs/tags/<name>) unless it exists already; an
   * existing tag on another commit is a conflict (a generation's tag never moves).
   */
  async tag(
    repo: string,
    token: string,
    t: { name: string; commit: string; message: string; at: Date },
  ): Promise<"already" | "tagged"> {
    const gitdir = await this.allow(token, repo, "write");
    const ref = `refs/tags/${t.name}`;
    const existing = await git.resolveRef({ fs, gitdir, ref, depth: 1 }).catch(() => null);
    if (existing) {
      const tagged = await git.readTag({ fs, gitdir, oid: existing }).then(
        (r) => r.tag.object,
        () => existing,
      );
      if (tagged === t.commit) return "already";
      throw new DomainError(
        "CONFLICT",
        `${repo} tag ${t.name} names ${tagged.slice(0, 12)}, not ${t.commit.slice(0, 12)}`,
      );
    }
    await git.annotatedTag({
      fs,
      gitdir,
      ref: t.name,
      object: t.commit,
      message: t.message,
      tagger: signature(SYSTEM_AUTHOR, t.at),
    });
    return "tagged";
  }

  async diff(repo: string, token: string, from: string, to: string): Promise<CommitDiff> {
    return diffCommits(await this.allow(token, repo, "read"), from, to);
  }

  async files(repo: string, token: string, commit: string): Promise<TreeEntry[]> {
    return listFiles(await this.allow(token, repo, "read"), commit);
  }

  async readBlob(repo: string, token: string, oid: string): Promise<Uint8Array> {
    const gitdir = await this.allow(token, repo, "read");
    return (await git.readBlob({ fs, gitdir, oid })).blob;
  }

  /** Whether `oid` is a commit in `repo` (promotion's P6 for the Candidate fork, docs/protocol.md, Promotion). */
  async hasCommit(repo: string, token: string, oid: string): Promise<boolean> {
    const gitdir = await this.allow(token, repo, "read");
    if (!(await this.exists(repo))) return false;
    try {
      await git.readCommit({ fs, gitdir, oid });
      return true;
    } catch {
      return false;
    }
  }

  async treeOf(repo: string, token: string, commit: string): Promise<string> {
    const gitdir = await this.allow(token, repo, "read");
    return (await git.readCommit({ fs, gitdir, oid: commit })).commit.tree;
  }
}
