import * as fs from "node:fs";
import { join } from "node:path";
import { candidateFork, type RhumbatronConfig, repoNamespace } from "@rhumbatron/core";
import { type Db, type SourceProbe, withRepoToken } from "@rhumbatron/db";
import git from "isomorphic-git";

/**
 * Promotion's P6 (docs/protocol.md, Promotion) from the web process: whether the composed commit is in the Candidate's
 * fork. Reads the worker's repositories on this machine (RHUMBATRON_DATA_DIR), through a read
 * token like every other git access.
 */
export function localSourceProbe(db: Db, config: RhumbatronConfig, dataDir: string, now: () => Date): SourceProbe {
  const root = join(dataDir, "git", repoNamespace(config.env));
  return {
    commitInCandidateFork(candidateId, commit) {
      const fork = candidateFork(candidateId);
      return withRepoToken(db, { repo: fork, mode: "read", purpose: "promotion check" }, config, now, async () => {
        try {
          await git.readCommit({ fs, gitdir: join(root, fork), oid: commit });
          return true;
        } catch {
          return false;
        }
      });
    },
  };
}

/** The `<oid> <ref>` lines of a smart-HTTP ref advertisement (pkt-line framed). */
export function advertisedRefs(body: string): Map<string, string> {
  const refs = new Map<string, string>();
  let i = 0;
  while (i + 4 <= body.length) {
    const len = Number.parseInt(body.slice(i, i + 4), 16);
    if (!Number.isFinite(len)) break;
    if (len === 0) {
      i += 4;
      continue;
    }
    const line = body.slice(i + 4, i + len).replace(/\n$/, "");
    i += len;
    const m = /^([0-9a-f]{40}) ([^\0\s]+)/.exec(line);
    if (m?.[1] && m[2]) refs.set(m[2], m[1]);
  }
  return refs;
}

/**
 * The same check when the web app runs on another host than the worker (RHUMBATRON_FUNCTION_HOST=split):
 * asks the worker's read-only git endpoint (RHUMBATRON_GIT_PUBLIC_URL) for the fork's refs with a
 * read token. The workflow pushes the composed commit as the fork's main, so main must be it.
 */
export function gitHttpSourceProbe(
  db: Db,
  config: RhumbatronConfig,
  gitUrl: string,
  now: () => Date,
  fetchImpl: typeof fetch = fetch,
): SourceProbe {
  const base = gitUrl.replace(/\/+$/, "");
  return {
    commitInCandidateFork(candidateId, commit) {
      const fork = candidateFork(candidateId);
      return withRepoToken(db, { repo: fork, mode: "read", purpose: "promotion check" }, config, now, async (token) => {
        const res = await fetchImpl(`${base}/${fork}.git/info/refs?service=git-upload-pack`, {
          headers: { authorization: `Basic ${Buffer.from(`x:${token}`).toString("base64")}` },
          signal: AbortSignal.timeout(10_000),
        }).catch(() => null);
        if (!res?.ok) return false;
        return advertisedRefs(await res.text()).get("refs/heads/main") === commit;
      });
    },
  };
}
