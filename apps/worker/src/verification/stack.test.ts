import { execFileSync } from "node:child_process";
import { canonicalRepo } from "@rhumbatron/core";
import { listLandingQueue, setLandingQueue, withRepoToken } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { stoppedAfterEach } from "../test-hooks.ts";
import {
  explainOnFailure,
  fastChecksPolicy,
  junitCommand,
  WHOLE_WORKER_LIMIT as LIMIT,
  oneFileChange,
  provisionedProject,
  startFullWorker,
  type TestWorld,
  testWorld,
  waitForPromoted,
  waitUntil,
} from "../test-world.ts";

/**
 * A speculative stack on the whole worker (real Postgres, git repositories and Sandbox): three
 * Changes verify side by side, each on the composed tree of the one below; the middle one fails;
 * what sat on it is composed again without it; what lands was verified on exactly the tree that
 * became main, which command-line git reads back from the canonical repository.
 */
const t = useTestDatabase();
const running = stoppedAfterEach();

/** The build fails where src/stack-bad.ts exists, and takes its time doing so, so the stack above it forms first. */
const BUILD = [
  "node",
  "-e",
  "const fs=require('fs');if(fs.existsSync('src/stack-bad.ts')){setTimeout(()=>{console.error('src/stack-bad.ts breaks the build');process.exit(1)},25000)}else{console.log('built')}",
];

const newest = (changeId: string) => t.db.candidate.findFirst({ where: { changeId }, orderBy: { createdAt: "desc" } });

function composedCandidate(changeId: string, what: string) {
  return waitUntil(
    what,
    () => newest(changeId),
    (c) => c?.composedCommit != null,
    LIMIT,
  );
}

/** Command-line git on the canonical repository's own folder: the oracle. */
function git(w: TestWorld, projectId: string, ...args: string[]): string {
  return execFileSync("git", ["--git-dir", w.store.gitdir(canonicalRepo(projectId)), ...args], {
    encoding: "utf8",
  }).trim();
}

describe("speculative stacks", () => {
  it(
    "a stack whose middle Candidate fails: the rest land, each verified on exactly the tree that became main",
    async () => {
      const w = await testWorld(t.db);
      const projectId = await provisionedProject(w);
      explainOnFailure(w, projectId);
      const policy = fastChecksPolicy({ commands: { build: BUILD, targeted: junitCommand(2), unit: junitCommand(2) } });
      running.push(await startFullWorker(w, t.url, { policy }));
      const admin = { tenantId: "ten_a", projectId, actorId: "usr_admin" };
      // Paused, nothing lands: the stack stands while it verifies.
      await setLandingQueue(t.db, { ...admin, state: "paused" }, w.deps);
      const change = (name: string) =>
        oneFileChange(w, projectId, {
          requestId: `stack-${name}`,
          title: `Add src/stack-${name}.ts`,
          path: `src/stack-${name}.ts`,
          content: `export const ${name} = 1;\n`,
          landWhenReady: true,
        });

      const a = await change("a");
      const bottom = await composedCandidate(a, "A composed");
      expect(bottom).toMatchObject({ stackedOn: null, baseGeneration: 0 });
      const b = await change("bad");
      const middle = await composedCandidate(b, "B composed");
      expect(middle).toMatchObject({ stackedOn: bottom?.id, baseGeneration: 1, baseCommit: bottom?.composedCommit });
      const c = await change("c");
      const top = await waitUntil(
        "C stacked on B",
        () => newest(c),
        (x) => x !== null,
        LIMIT,
      );
      expect(top).toMatchObject({ stackedOn: middle?.id, baseGeneration: 2 });
      // The queue shows the stack: which Candidate each is built on.
      const queue = await listLandingQueue(t.db, { tenantId: "ten_a", projectId });
      expect(queue.find((e) => e.changeId === b)?.stackedOn).toMatchObject({ candidateId: bottom?.id, changeId: a });

      // B fails; C, which sat on it, is composed again without it, on A, and verifies there.
      await waitUntil(
        "B rejected",
        () => newest(b),
        (x) => x?.status === "rejected",
        LIMIT,
      );
      const again = await waitUntil(
        "C verified again on A",
        () => newest(c),
        (x) => x?.status === "verified",
        LIMIT,
      );
      expect(again).toMatchObject({ stackedOn: bottom?.id, baseGeneration: 1, baseCommit: bottom?.composedCommit });
      expect((await t.db.candidate.findUniqueOrThrow({ where: { id: top?.id ?? "" } })).status).toBe("stale");
      const waiting = await listLandingQueue(t.db, { tenantId: "ten_a", projectId });
      expect(waiting.find((e) => e.changeId === c)).toMatchObject({ waitingFor: "stack" });

      await setLandingQueue(t.db, { ...admin, state: "running" }, w.deps);
      await waitForPromoted(w, [a, c], "A and C promoted");
      const promoted = await t.db.candidate.findMany({
        where: { projectId, status: "promoted", changeId: { in: [a, c] } },
        orderBy: { promotedGeneration: "asc" },
      });
      expect(promoted.map((p) => [p.changeId, p.promotedGeneration])).toEqual([
        [a, 1],
        [c, 2],
      ]);
      // C landed on A's verification alone: its own Evidence, no check run after the stack was resolved.
      expect(promoted[1]?.id).toBe(again?.id);

      // main at the newest generation, through source sync.
      const repo = canonicalRepo(projectId);
      await waitUntil(
        "main fast-forwarded to S2",
        () =>
          withRepoToken(t.db, { repo, mode: "read", purpose: "test" }, w.config, w.deps.now, (tk) =>
            w.store.head(repo, tk),
          ),
        (h) => h === promoted[1]?.composedCommit,
        LIMIT,
      );
      // The oracle: main's first-parent history is the generations, and each generation's commit
      // is the promoted Candidate's composed commit, with its composed tree, on the one before.
      const history = git(w, projectId, "rev-list", "--first-parent", "main").split("\n");
      const generations = await t.db.canonicalGeneration.findMany({
        where: { projectId },
        orderBy: { generation: "desc" },
      });
      expect(history.slice(0, generations.length)).toEqual(generations.map((g) => g.commit));
      for (const p of promoted) {
        const commit = p.composedCommit ?? "";
        expect(git(w, projectId, "rev-parse", `${commit}^{tree}`)).toBe(p.composedTree);
        expect(git(w, projectId, "rev-parse", `${commit}^`)).toBe(p.baseCommit);
        const gen = generations.find((g) => g.generation === p.promotedGeneration);
        expect(gen?.commit).toBe(commit);
        // Verified on that tree: every planned check passed on this Candidate.
        const planned = (p.plan as { checks: { id: string }[] }).checks.map((x) => x.id);
        const evidence = await t.db.evidence.findMany({ where: { candidateId: p.id } });
        for (const id of planned)
          expect(evidence.filter((e) => e.checkId === id).map((e) => e.status)).toContain("pass");
      }
      const files = git(w, projectId, "ls-tree", "-r", "--name-only", "main").split("\n");
      expect(files).toEqual(expect.arrayContaining(["src/stack-a.ts", "src/stack-c.ts"]));
      expect(files).not.toContain("src/stack-bad.ts");
      // B waits for a person; nothing of it landed.
      expect((await t.db.change.findUniqueOrThrow({ where: { id: b } })).status).not.toBe("promoted");
    },
    LIMIT * 2,
  );
});
