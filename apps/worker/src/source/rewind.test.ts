import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DomainError, loadConfig, workspaceFork } from "@rhumbatron/core";
import { issueRepoToken } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { SourceStore } from "./store.ts";

/**
 * SourceStore.rewind: a restored Agent run moves its fork's main back to the recorded start when a
 * lost attempt pushed there (runner.ts, prepareStep). It may only drop commits made on top of that
 * start, so anything else is refused and main stays where it is.
 */
const t = useTestDatabase();
const config = loadConfig("dev");
const who = { name: "Agent", email: "agent@localhost" };

async function forkWithTwoCommits() {
  const root = mkdtempSync(join(tmpdir(), "rh-rewind-"));
  const store = new SourceStore({
    db: t.db,
    config,
    now: () => new Date(),
    root: join(root, "rhumbatron-projects-dev"),
  });
  const token = async (repo: string, mode: "read" | "write") =>
    (await issueRepoToken(t.db, { repo, mode, purpose: "test" }, config, new Date())).token;
  const projectId = `proj_${randomUUID()}`;
  const files = new Map([["README.md", new TextEncoder().encode("# shop\n")]]);
  const s0 = await store.provision(projectId, await token(projectId, "write"), files, "S0: project template");
  const fork = workspaceFork(`run_${randomUUID()}`);
  await store.fork(projectId, await token(projectId, "read"), fork);
  const dir = join(root, "run");
  await store.checkout(fork, await token(fork, "read"), dir);
  const commits: string[] = [];
  for (const n of [1, 2]) {
    writeFileSync(join(dir, "README.md"), `# shop ${n}\n`);
    const commit = await store.commitAll(dir, `work ${n}`, who);
    if (!commit) throw new Error("nothing committed");
    await store.push(dir, fork, await token(fork, "write"));
    commits.push(commit);
  }
  const [one = "", two = ""] = commits;
  return { store, token, fork, s0: s0.commit, one, two };
}

describe("SourceStore.rewind", () => {
  it("moves main back to one of its ancestors, and a repeat finds it there", async () => {
    const s = await forkWithTwoCommits();
    expect(await s.store.head(s.fork, await s.token(s.fork, "read"))).toBe(s.two);
    expect(await s.store.rewind(s.fork, await s.token(s.fork, "write"), s.s0)).toBe("rewound");
    expect(await s.store.head(s.fork, await s.token(s.fork, "read"))).toBe(s.s0);
    expect(await s.store.rewind(s.fork, await s.token(s.fork, "write"), s.s0)).toBe("already");
    // The dropped commits' objects stay in the repository.
    expect(await s.store.hasCommit(s.fork, await s.token(s.fork, "read"), s.two)).toBe(true);
  });

  it("refuses to move main anywhere but back, and without a write token; main stays put", async () => {
    const s = await forkWithTwoCommits();
    expect(await s.store.rewind(s.fork, await s.token(s.fork, "write"), s.one)).toBe("rewound");
    // Forward (a descendant, its objects in the repository) and a commit main never reached.
    for (const to of [s.two, "0123456789abcdef0123456789abcdef01234567"]) {
      const refused = await s.store.rewind(s.fork, await s.token(s.fork, "write"), to).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(DomainError);
      expect(refused).toMatchObject({ code: "CONFLICT" });
    }
    await expect(s.store.rewind(s.fork, await s.token(s.fork, "read"), s.s0)).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    expect(await s.store.head(s.fork, await s.token(s.fork, "read"))).toBe(s.one);
  });
});
