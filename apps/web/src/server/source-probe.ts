import * as fs from "node:fs";
import { join } from "node:path";
import { candidateFork, type RhumbatronConfig, repoNamespace } from "@rhumbatron/core";
import { type Db, type SourceProbe, withRepoToken } from "@rhumbatron/db";
import git from "isomorphic-git";

/**
 * Promotion precondition 8 from the web process: whether the composed commit is in the Candidate's
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
