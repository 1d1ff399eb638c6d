import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { type BlobStore, canonicalRepo, type RhumbatronConfig, repoNamespace, sourceKeys } from "@rhumbatron/core";
import { type CanonicalReader, type Db, generationAtCommit, withRepoToken } from "@rhumbatron/db";

const run = promisify(execFile);
const COMMIT = /^[0-9a-f]{40}$/;
/** A checks file is at most 256 KiB (core's CHECKS_FILE_BOUNDS); detection reads root manifests. */
const MAX_BUFFER = 8 * 1024 * 1024;

/**
 * Reads a project's canonical repository on this machine (`<data dir>/git/<namespace>/<project>`, the
 * worker's bare repositories) with command-line git, through a read token like every git access.
 * Used by projects.checks; a host that does not hold the repositories (split hosting) has none.
 */
export function localCanonicalReader(
  db: Db,
  config: RhumbatronConfig,
  dataDir: string,
  now: () => Date,
): CanonicalReader {
  const root = join(dataDir, "git", repoNamespace(config.env));
  const git = (projectId: string, args: string[]) => {
    const repo = canonicalRepo(projectId);
    return withRepoToken(db, { repo, mode: "read", purpose: "checks file" }, config, now, () =>
      run("git", ["--git-dir", join(root, repo), ...args], { maxBuffer: MAX_BUFFER, encoding: "utf8" }).then(
        (r) => r.stdout,
        () => null,
      ),
    );
  };
  return {
    async files(projectId, commit) {
      if (!COMMIT.test(commit)) return null;
      const out = await git(projectId, ["ls-tree", "-r", "-z", "--full-tree", commit]);
      if (out === null) return null;
      return out
        .split("\0")
        .filter(Boolean)
        .flatMap((line) => {
          const m = /^\d+ blob ([0-9a-f]{40})\t(.+)$/s.exec(line);
          return m?.[1] && m[2] ? [{ blob: m[1], path: m[2] }] : [];
        });
    },
    async read(projectId, commit, path) {
      if (!COMMIT.test(commit) || path.startsWith("-")) return null;
      return git(projectId, ["show", `${commit}:${path}`]);
    },
  };
}

/**
 * Reads a project's canonical generations from the code store the worker publishes for each one
 * (apps/worker/src/source/code-store.ts: `code.json`, path -> blob id, and each file's bytes up to
 * source.codeStoreMaxBlobBytes) in the shared blob store: how a web host without the repositories
 * (split hosting) still shows a project's checks. A commit that is no generation of the project,
 * or whose code store is not published yet, is unreadable; so is a file the store did not keep.
 */
export function codeStoreCanonicalReader(db: Db, blobs: BlobStore): CanonicalReader {
  const codeOf = async (projectId: string, commit: string): Promise<Record<string, string> | null> => {
    if (!COMMIT.test(commit)) return null;
    const generation = await generationAtCommit(db, projectId, commit);
    if (!generation) return null;
    const code = await blobs.get(sourceKeys.code(projectId, generation.tree));
    return code ? (JSON.parse(new TextDecoder().decode(code.body)) as Record<string, string>) : null;
  };
  return {
    async files(projectId, commit) {
      const code = await codeOf(projectId, commit);
      return code ? Object.entries(code).map(([path, blob]) => ({ path, blob })) : null;
    },
    async read(projectId, commit, path) {
      const blob = (await codeOf(projectId, commit))?.[path];
      if (!blob) return null;
      const body = await blobs.get(sourceKeys.blob(projectId, blob));
      return body ? new TextDecoder().decode(body.body) : null;
    },
  };
}
