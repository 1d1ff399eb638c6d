import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, sourceKeys, workspaceFork } from "@rhumbatron/core";
import { issueRepoToken, localFolderBlobStore } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { publishCodeStore, storePatch } from "./code-store.ts";
import { SourceStore } from "./store.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
let clock = new Date("2026-10-02T00:00:00Z");
const enc = (s: string) => new TextEncoder().encode(s);
const who = { name: "Agent", email: "agent@localhost" };

function setup() {
  const root = mkdtempSync(join(tmpdir(), "rh-git-"));
  const store = new SourceStore({ db: t.db, config, now: () => clock, root: join(root, "rhumbatron-projects-dev") });
  const token = async (repo: string, mode: "read" | "write") =>
    (await issueRepoToken(t.db, { repo, mode, purpose: "test" }, config, clock)).token;
  return { root, store, token, blobs: localFolderBlobStore(join(root, "blobs")) };
}

async function provisioned() {
  const s = setup();
  const projectId = `proj_${randomUUID()}`;
  const files = new Map([
    ["README.md", enc("# shop\n")],
    ["src/cart.ts", enc("export const items = [];\n")],
    ["src/wishlist.ts", enc("export const wished = [];\n")],
  ]);
  const s0 = await s.store.provision(projectId, await s.token(projectId, "write"), files, "S0: project template");
  return { ...s, projectId, s0 };
}

async function runWork(
  s: Awaited<ReturnType<typeof provisioned>>,
  edit: (dir: string) => void,
  stackOn: { repo: string; baseCommit: string; commit: string }[] = [],
) {
  const runId = `run_${randomUUID()}`;
  const fork = workspaceFork(runId);
  await s.store.fork(s.projectId, await s.token(s.projectId, "read"), fork);
  const dir = join(s.root, "runs", runId);
  const base = await s.store.checkout(fork, await s.token(fork, "read"), dir);
  if (stackOn.length) {
    await s.store.compose(
      dir,
      base,
      await Promise.all(
        stackOn.map(async (x) => ({
          ...x,
          changeSetId: x.repo,
          taskKey: x.repo,
          token: await s.token(x.repo, "read"),
        })),
      ),
      { message: "start", at: new Date("2030-01-01T00:00:00Z") },
    );
  }
  edit(dir);
  const commit = await s.store.commitAll(dir, `work of ${runId}`, who);
  if (!commit) throw new Error("nothing committed");
  await s.store.push(dir, fork, await s.token(fork, "write"));
  return { runId, fork, dir, base, commit };
}

describe("the source store", () => {
  it("provisions S0 once, forks on first write, composes, commits, pushes and diffs", async () => {
    const s = await provisioned();
    const again = await s.store.provision(s.projectId, await s.token(s.projectId, "write"), new Map(), "ignored");
    expect(again).toEqual(s.s0);

    const one = await runWork(s, (dir) => writeFileSync(join(dir, "src/cart.ts"), "export const items = [1];\n"));
    expect(one.base).toBe(s.s0.commit);
    expect(await s.store.head(one.fork, await s.token(one.fork, "read"))).toBe(one.commit);
    expect(await s.store.head(s.projectId, await s.token(s.projectId, "read"))).toBe(s.s0.commit);

    // A dependent Task starts from the first run's ChangeSet composed on S0, then adds its own file and deletes one.
    const two = await runWork(
      s,
      (dir) => {
        expect(readFileSync(join(dir, "src/cart.ts"), "utf8")).toBe("export const items = [1];\n");
        mkdirSync(join(dir, "src/ui"), { recursive: true });
        writeFileSync(join(dir, "src/ui/list.ts"), "export const list = 1;\n");
        rmSync(join(dir, "src/wishlist.ts"));
      },
      [{ repo: one.fork, baseCommit: one.base, commit: one.commit }],
    );
    const d = await s.store.diff(two.fork, await s.token(two.fork, "read"), s.s0.commit, two.commit);
    expect(d.paths).toEqual(["src/cart.ts", "src/ui/list.ts", "src/wishlist.ts"]);
    expect(d.patch).toContain("diff --git a/src/cart.ts b/src/cart.ts\n--- a/src/cart.ts\n+++ b/src/cart.ts\n");
    expect(d.patch).toContain("-export const items = [];\n+export const items = [1];\n");
    expect(d.patch).toContain("new file mode 100644\n--- /dev/null\n+++ b/src/ui/list.ts");
    expect(d.patch).toContain("deleted file mode 100644\n--- a/src/wishlist.ts\n+++ /dev/null");
    // The same diff with the system git, as a cross-check of the format.
    const files = await s.store.files(two.fork, await s.token(two.fork, "read"), two.commit);
    expect(files.map((f) => f.path)).toEqual(["README.md", "src/cart.ts", "src/ui/list.ts"]);
  });

  it("refuses access without a live token for that repository and mode", async () => {
    const s = await provisioned();
    const read = await s.token(s.projectId, "read");
    await expect(s.store.provision(s.projectId, read, new Map(), "x")).rejects.toMatchObject({ code: "FORBIDDEN" });
    const other = `proj_${randomUUID()}`;
    await expect(s.store.head(s.projectId, await s.token(other, "read"))).rejects.toMatchObject({ code: "FORBIDDEN" });
    const dir = join(s.root, "x");
    const fork = workspaceFork(`run_${randomUUID()}`);
    await s.store.fork(s.projectId, read, fork);
    await s.store.checkout(fork, await s.token(fork, "read"), dir);
    writeFileSync(join(dir, "x.txt"), "x\n");
    await s.store.commitAll(dir, "x", who);
    await expect(s.store.push(dir, fork, await s.token(fork, "read"))).rejects.toThrow(/read-only/);
    const expiring = await s.token(s.projectId, "read");
    clock = new Date(clock.getTime() + config.source.repoTokenTtlSeconds * 1000);
    await expect(s.store.head(s.projectId, expiring)).rejects.toThrow(/expired/);
    await expect(s.store.head("../../etc" as string, await s.token(s.projectId, "read"))).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });

  it("refuses a push that is not a fast-forward", async () => {
    const s = await provisioned();
    const a = await runWork(s, (dir) => writeFileSync(join(dir, "a.txt"), "a\n"));
    const dir = join(s.root, "stale");
    await s.store.checkout(s.projectId, await s.token(s.projectId, "read"), dir);
    writeFileSync(join(dir, "b.txt"), "b\n");
    await s.store.commitAll(dir, "b", who);
    await expect(s.store.push(dir, a.fork, await s.token(a.fork, "write"))).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await s.store.head(a.fork, await s.token(a.fork, "read"))).toBe(a.commit);
  });

  it("fills the code store once per blob, lists files over 1 MB without copying them", async () => {
    const s = await provisioned();
    const read = async () => s.token(s.projectId, "read");
    const first = await publishCodeStore({
      store: s.store,
      blobs: s.blobs,
      config,
      projectId: s.projectId,
      repo: s.projectId,
      token: await read(),
      commit: s.s0.commit,
    });
    expect(first).toMatchObject({ files: 3, copied: 3, skippedLarge: 0, tree: s.s0.tree });
    const index = JSON.parse(
      new TextDecoder().decode((await s.blobs.get(sourceKeys.index(s.projectId, s.s0.tree)))?.body),
    );
    expect(index.files.map((f: { path: string }) => f.path)).toEqual(["README.md", "src/cart.ts", "src/wishlist.ts"]);

    // A "promotion": canonical moves to a commit that changes one file and adds a large one.
    const dir = join(s.root, "promo");
    await s.store.checkout(s.projectId, await read(), dir);
    writeFileSync(join(dir, "src/cart.ts"), "export const items = [2];\n");
    writeFileSync(join(dir, "big.bin"), Buffer.alloc(config.source.codeStoreMaxBlobBytes + 1, 7));
    await s.store.commitAll(dir, "S1", who);
    const s1 = await s.store.push(dir, s.projectId, await s.token(s.projectId, "write"));
    const second = await publishCodeStore({
      store: s.store,
      blobs: s.blobs,
      config,
      projectId: s.projectId,
      repo: s.projectId,
      token: await read(),
      commit: s1,
      previousTree: s.s0.tree,
    });
    expect(second).toMatchObject({ files: 4, copied: 1, skippedLarge: 1 });
    const code = JSON.parse(
      new TextDecoder().decode((await s.blobs.get(sourceKeys.code(s.projectId, second.tree)))?.body),
    );
    expect(Object.keys(code).sort()).toEqual(["README.md", "big.bin", "src/cart.ts", "src/wishlist.ts"]);
    expect(await s.blobs.has(sourceKeys.blob(s.projectId, code["big.bin"]))).toBe(false);
    expect((await s.blobs.list(`source/${s.projectId}/blobs/`)).length).toBe(4);
  });

  it("stores patches cut at 512 KB on a line boundary with the full size in metadata", async () => {
    const s = setup();
    const patch = `${"+".repeat(999)}\n`.repeat(600);
    const r = await storePatch(s.blobs, "source/p/patches/changesets/cs_1.patch", patch, config.source.patchMaxBytes);
    expect(r).toMatchObject({ truncated: true, fullBytes: 600_000 });
    const obj = await s.blobs.get("source/p/patches/changesets/cs_1.patch");
    expect(obj?.body.length).toBe(524_000);
    expect(obj?.metadata).toMatchObject({ truncated: "true", fullSize: "600000" });
  });

  it("deletes a repository by name", async () => {
    const s = await provisioned();
    expect(await s.store.delete(s.projectId)).toBe(true);
    expect(existsSync(s.store.gitdir(s.projectId))).toBe(false);
    expect(await s.store.delete(s.projectId)).toBe(false);
  });

  it("forks while canonical is promoted: each fork's main has every object it reaches", async () => {
    // Promotions write objects into canonical and move its main while Agent runs fork it. A fork that
    // copied the new ref but not all of the new objects failed its run ("Could not find <oid>").
    const s = await provisioned();
    const read = await s.token(s.projectId, "read");
    let promoting = true;
    let stopped = false;
    const promotions = (async () => {
      try {
        for (let i = 0; i < 12 && !stopped; i++) {
          const from = await s.store.head(s.projectId, read);
          const w = await runWork(s, (dir) => {
            // Several new files per step, so the copy has many new objects to miss.
            for (let f = 0; f < 8; f++) writeFileSync(join(dir, `gen${i}_${f}.txt`), `${i}.${f}\n`);
          });
          expect(w.base).toBe(from);
          await s.store.fastForward(
            s.projectId,
            await s.token(s.projectId, "write"),
            w.fork,
            await s.token(w.fork, "read"),
            from,
            w.commit,
          );
        }
      } finally {
        promoting = false;
      }
    })();
    const heads = new Set<string>();
    let forks = 0;
    try {
      while (promoting) {
        const fork = workspaceFork(`run_${randomUUID()}`);
        await s.store.fork(s.projectId, read, fork);
        const forkRead = await s.token(fork, "read");
        const head = await s.store.head(fork, forkRead);
        // Every blob of the fork's main can be read, so no object it reaches is missing or cut short.
        const files = await s.store.files(fork, forkRead, head);
        for (const f of files) await s.store.readBlob(fork, forkRead, f.oid);
        heads.add(head);
        forks++;
      }
    } finally {
      // A failed fork stops the promotions before the test's database goes away.
      stopped = true;
      await promotions.catch(() => {});
    }
    await promotions;
    expect(forks).toBeGreaterThan(1);
    expect(heads.size).toBeGreaterThan(1);
  });
});
