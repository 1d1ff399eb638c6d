import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { candidateFork, loadConfig, workspaceFork } from "@rhumbatron/core";
import { checkRepoToken, issueRepoToken } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterAll, describe, expect, it } from "vitest";
import { startGitHttpServer } from "./git-http.ts";
import { RemoteSourceStore } from "./remote-store.ts";
import { sourceRpcRoute, sourceServiceKey } from "./service-rpc.ts";
import { SourceStore } from "./store.ts";

/**
 * A worker with no repositories of its own (remote-store.ts) does a Task's whole source path through
 * the source service (service-rpc.ts and git-http.ts on one real HTTP server): provision, fork,
 * clone, commit, push, compose, promote. Command-line git on the service's own folders is the oracle.
 */
const t = useTestDatabase();
const config = loadConfig("dev");
const enc = (s: string) => new TextEncoder().encode(s);
const who = { name: "Agent", email: "agent@localhost" };
const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function service() {
  const root = join(mkdtempSync(join(tmpdir(), "rh-source-service-")), "rhumbatron-projects-dev");
  const store = new SourceStore({ db: t.db, config, now: () => new Date(), root });
  const key = sourceServiceKey("test secret");
  const server = await startGitHttpServer({
    port: 0,
    repoRoot: root,
    authorize: (repo, token) => checkRepoToken(t.db, token, repo, "read", new Date()),
    authorizeWrite: (repo, token) => checkRepoToken(t.db, token, repo, "write", new Date()),
    routes: [sourceRpcRoute({ store, key })],
  });
  stops.push(() => server.close());
  const url = `http://127.0.0.1:${server.port}`;
  const remote = new RemoteSourceStore({ url, key, now: () => new Date() });
  const token = async (repo: string, mode: "read" | "write") =>
    (await issueRepoToken(t.db, { repo, mode, purpose: "test" }, config, new Date())).token;
  const git = (repo: string, ...args: string[]) =>
    execFileSync("git", ["--git-dir", store.gitdir(repo), ...args], { encoding: "utf8" }).trim();
  const workDir = () => mkdtempSync(join(tmpdir(), "rh-remote-work-"));
  return { store, remote, url, token, git, workDir };
}

describe("a worker without repositories, through the source service", () => {
  it("provisions, forks, clones, pushes, composes and promotes; the service's repositories say so", async () => {
    const s = await service();
    const projectId = `proj_${randomUUID()}`;
    const files = new Map([["README.md", enc("# shop\n")]]);
    const s0 = await s.remote.provision(projectId, await s.token(projectId, "write"), files, "S0");
    expect(s.git(projectId, "rev-parse", "refs/heads/main")).toBe(s0.commit);
    expect(await s.remote.exists(projectId)).toBe(true);

    // An Agent run: its fork, a clone over HTTP, one commit pushed back with a write token.
    const fork = workspaceFork(`run_${randomUUID()}`);
    await s.remote.fork(projectId, await s.token(projectId, "read"), fork);
    const dir = s.workDir();
    expect(await s.remote.checkout(fork, await s.token(fork, "read"), dir)).toBe(s0.commit);
    expect(readFileSync(join(dir, "README.md"), "utf8")).toBe("# shop\n");
    writeFileSync(join(dir, "wish.ts"), "export const wish = 1;\n");
    const work = await s.remote.commitAll(dir, "Add wish.ts", who);
    expect(work).toMatch(/^[0-9a-f]{40}$/);
    expect(await s.remote.push(dir, fork, await s.token(fork, "write"))).toBe(work);
    expect(s.git(fork, "rev-parse", "refs/heads/main")).toBe(work);
    expect(
      await s.remote.readBlob(fork, await s.token(fork, "read"), s.git(fork, "rev-parse", "main:wish.ts")),
    ).toEqual(enc("export const wish = 1;\n"));

    // A Candidate: composed in a working copy of canonical, pushed to its fork, promoted by CAS.
    const cand = candidateFork(`cand_${randomUUID().replaceAll("-", "")}`);
    await s.remote.fork(projectId, await s.token(projectId, "read"), cand);
    const ws = s.workDir();
    await s.remote.checkout(cand, await s.token(cand, "read"), ws);
    const source = { repo: fork, token: await s.token(fork, "read"), changeSetId: "cs_1", taskKey: "a" };
    const composed = await s.remote.compose(ws, s0.commit, [{ ...source, baseCommit: s0.commit, commit: work ?? "" }], {
      message: "Candidate",
      at: new Date("2030-01-01T00:00:00Z"),
    });
    await s.remote.push(ws, cand, await s.token(cand, "write"));
    const promote = async (expectedOld: string) =>
      s.remote.fastForward(
        projectId,
        await s.token(projectId, "write"),
        cand,
        await s.token(cand, "read"),
        expectedOld,
        composed,
      );
    expect(await promote(s0.commit)).toBe("advanced");
    expect(s.git(projectId, "rev-parse", "refs/heads/main")).toBe(composed);
    expect(s.git(projectId, "show", `${composed}:wish.ts`)).toBe("export const wish = 1;");
    expect(s.git(projectId, "rev-parse", `${composed}^`)).toBe(s0.commit);
    // A repeat is "already" (a stale expectation is a CONFLICT: the next test).
    expect(await promote(s0.commit)).toBe("already");
  });

  it("refuses what the store refuses, with the store's codes, and changes nothing", async () => {
    const s = await service();
    const projectId = `proj_${randomUUID()}`;
    const s0 = await s.remote.provision(
      projectId,
      await s.token(projectId, "write"),
      new Map([["a", enc("a\n")]]),
      "S0",
    );
    const fork = workspaceFork(`run_${randomUUID()}`);
    await s.remote.fork(projectId, await s.token(projectId, "read"), fork);

    // A read token where the operation writes: FORBIDDEN; an unknown commit: the store's error.
    await expect(s.remote.rewind(fork, await s.token(fork, "read"), s0.commit)).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    // A CAS from the wrong old value: CONFLICT, main stays.
    await expect(
      s.remote.fastForward(
        projectId,
        await s.token(projectId, "write"),
        fork,
        await s.token(fork, "read"),
        "0".repeat(40),
        // a commit that is not s0 (its last digit changed, never to itself)
        s0.commit.replace(/.$/, (c) => (c === "0" ? "1" : "0")),
      ),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    expect(s.git(projectId, "rev-parse", "refs/heads/main")).toBe(s0.commit);

    // A push that is not a fast-forward of the fork's main: CONFLICT, the fork's main stays.
    const one = s.workDir();
    await s.remote.checkout(fork, await s.token(fork, "read"), one);
    writeFileSync(join(one, "b"), "b\n");
    const ahead = await s.remote.commitAll(one, "b", who);
    await s.remote.push(one, fork, await s.token(fork, "write"));
    const other = s.workDir();
    await s.remote.checkout(fork, await s.token(fork, "read"), other, s0.commit);
    writeFileSync(join(other, "c"), "c\n");
    await s.remote.commitAll(other, "c", who);
    await expect(s.remote.push(other, fork, await s.token(fork, "write"))).rejects.toMatchObject({ code: "CONFLICT" });
    expect(s.git(fork, "rev-parse", "refs/heads/main")).toBe(ahead);

    // A caller without the installation's key gets nothing done.
    const stranger = new RemoteSourceStore({
      url: s.url,
      key: sourceServiceKey("another secret"),
      now: () => new Date(),
    });
    await expect(stranger.head(projectId, await s.token(projectId, "read"))).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    // A service that is not there: UNAVAILABLE, saying where.
    const gone = new RemoteSourceStore({ url: "http://127.0.0.1:9", key: "k", now: () => new Date() });
    await expect(gone.head(projectId, "t")).rejects.toMatchObject({
      code: "UNAVAILABLE",
      message: expect.stringContaining("127.0.0.1:9"),
    });
  });
});
