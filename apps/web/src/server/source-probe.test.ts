import * as fs from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { candidateFork, loadConfig, repoNamespace } from "@rhumbatron/core";
import { checkRepoToken } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { startGitHttpServer } from "@rhumbatron/worker";
import git from "isomorphic-git";
import { describe, expect, it } from "vitest";
import { advertisedRefs, gitHttpSourceProbe, localSourceProbe } from "./source-probe.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
const now = () => new Date();
const candidateId = "cand_0123456789abcdef0123456789abcdef";

/** A bare Candidate fork whose main is one commit. */
async function forkWithCommit() {
  const dataDir = mkdtempSync(join(tmpdir(), "rh-probe-"));
  const root = join(dataDir, "git", repoNamespace(config.env));
  const gitdir = join(root, candidateFork(candidateId));
  await git.init({ fs, gitdir, bare: true, defaultBranch: "main" });
  const blob = await git.writeBlob({ fs, gitdir, blob: new TextEncoder().encode("hi\n") });
  const tree = await git.writeTree({ fs, gitdir, tree: [{ mode: "100644", path: "a.txt", oid: blob, type: "blob" }] });
  const who = { name: "t", email: "t@t", timestamp: 0, timezoneOffset: 0 };
  const commit = await git.writeCommit({
    fs,
    gitdir,
    commit: { message: "c", tree, parent: [], author: who, committer: who },
  });
  await git.writeRef({ fs, gitdir, ref: "refs/heads/main", value: commit, force: true });
  return { dataDir, root, commit };
}

describe("promotion P6 (docs/protocol.md): the composed commit is in the Candidate fork", () => {
  it("reads the fork on this host", async () => {
    const f = await forkWithCommit();
    const probe = localSourceProbe(t.db, config, f.dataDir, now);
    expect(await probe.commitInCandidateFork(candidateId, f.commit)).toBe(true);
    expect(await probe.commitInCandidateFork(candidateId, "f".repeat(40))).toBe(false);
    expect(await probe.commitInCandidateFork("cand_ffffffffffffffffffffffffffffffff", f.commit)).toBe(false);
  });

  it("asks the worker's git endpoint with a read token when the web runs elsewhere", async () => {
    const f = await forkWithCommit();
    const server = await startGitHttpServer({
      port: 0,
      repoRoot: f.root,
      authorize: (repo, token) => checkRepoToken(t.db, token, repo, "read", new Date()),
    });
    try {
      const probe = gitHttpSourceProbe(t.db, config, `http://127.0.0.1:${server.port}/git`, now);
      expect(await probe.commitInCandidateFork(candidateId, f.commit)).toBe(true);
      expect(await probe.commitInCandidateFork(candidateId, "f".repeat(40))).toBe(false);
      // Nothing listening: not in the fork, never an exception.
      const down = gitHttpSourceProbe(t.db, config, "http://127.0.0.1:1/git", now);
      expect(await down.commitInCandidateFork(candidateId, f.commit)).toBe(false);
    } finally {
      await server.close();
    }
  });

  it("parses pkt-line ref advertisements", () => {
    const line = (s: string) => `${(s.length + 4).toString(16).padStart(4, "0")}${s}`;
    const oid = "a".repeat(40);
    const body = `${line("# service=git-upload-pack\n")}0000${line(`${oid} HEAD\0side-band-64k\n`)}${line(`${oid} refs/heads/main\n`)}0000`;
    expect(advertisedRefs(body).get("refs/heads/main")).toBe(oid);
  });
});
