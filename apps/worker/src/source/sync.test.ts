import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { sourceKeys } from "@rhumbatron/core";
import { useTestDatabase } from "@rhumbatron/db/testing";
import git from "isomorphic-git";
import { describe, expect, it } from "vitest";
import { promotionFixture } from "./promotion.testing.ts";
import { syncCanonical } from "./sync.ts";

const t = useTestDatabase();

const codeOf = async (f: Awaited<ReturnType<typeof promotionFixture>>, tree: string) => {
  const blob = await f.blobs.get(sourceKeys.code(f.projectId, tree));
  return blob ? (JSON.parse(new TextDecoder().decode(blob.body)) as Record<string, string>) : null;
};

describe("the source sync of a promotion", () => {
  it("fast-forwards canonical main to the promoted commit and publishes its code store; a repeat does nothing", async () => {
    const f = await promotionFixture(t.db);
    const s1 = await f.promote({ "src/cart.ts": "export const cart = 1;\n" });
    const blobsBefore = await f.blobs.list(`source/${f.projectId}/blobs/`);

    const r = await syncCanonical(f.deps, f.projectId, 1);
    expect(r).toMatchObject({ outcome: "advanced", generation: 1, commit: s1.commit, tree: s1.tree, from: 0 });
    expect(r.published).toEqual([1]);
    expect(await f.store.head(f.projectId, await f.token(f.projectId, "read"))).toBe(s1.commit);
    // The code store of S1: every path, and only the one new blob copied.
    expect(Object.keys((await codeOf(f, s1.tree)) ?? {})).toEqual(["README.md", "src/cart.ts", "src/wishlist.ts"]);
    const blobsAfter = await f.blobs.list(`source/${f.projectId}/blobs/`);
    expect(blobsAfter.length - blobsBefore.length).toBe(1);

    const again = await syncCanonical(f.deps, f.projectId, 1);
    expect(again).toMatchObject({ outcome: "already", from: 1, published: [] });
    expect(await f.store.head(f.projectId, await f.token(f.projectId, "read"))).toBe(s1.commit);
  });

  it("advances generation by generation when main is more than one behind", async () => {
    const f = await promotionFixture(t.db);
    const s1 = await f.promote({ "src/cart.ts": "export const cart = 1;\n" });
    const s2 = await f.promote({ "src/ui/list.ts": "export const list = 2;\n", "src/wishlist.ts": null });
    const r = await syncCanonical(f.deps, f.projectId, 2);
    expect(r).toMatchObject({ outcome: "advanced", from: 0, commit: s2.commit, published: [1, 2] });
    const gitdir = f.store.gitdir(f.projectId);
    expect(await git.isDescendent({ fs, gitdir, oid: s2.commit, ancestor: s1.commit, depth: -1 })).toBe(true);
    expect(Object.keys((await codeOf(f, s2.tree)) ?? {})).toEqual(["README.md", "src/cart.ts", "src/ui/list.ts"]);
    expect(await codeOf(f, s1.tree)).not.toBeNull();
    // Asking for an older generation once main is past it changes nothing.
    expect(await syncCanonical(f.deps, f.projectId, 1)).toMatchObject({ outcome: "already", from: 2, published: [] });
  });

  it("tags each generation main reaches (gen-<n>): the Change's title, then Change, Candidate, Generation and Approved-by trailers", async () => {
    const f = await promotionFixture(t.db);
    const change = await t.db.change.update({
      where: { id: f.changeId },
      data: { title: "Let shoppers empty the cart" },
    });
    const s1 = await f.promote({ "src/cart.ts": "export const cart = 1;\n" });
    const s2 = await f.promote({ "src/cart.ts": "export const cart = 2;\n" });
    await t.db.user.create({ data: { id: "usr_tag_approver", email: "ada@example.com", name: "Ada Approver" } });
    await t.db.approval.create({
      data: { candidateId: s2.candidateId, decision: "granted", treeHash: s2.tree, decidedBy: "usr_tag_approver" },
    });
    expect((await syncCanonical(f.deps, f.projectId, 2)).tagged).toEqual([1, 2]);
    // Command-line git is the reader: the tags are annotated, on each generation's commit.
    const gitdir = f.store.gitdir(f.projectId);
    const cli = (...args: string[]) => execFileSync("git", ["--git-dir", gitdir, ...args], { encoding: "utf8" }).trim();
    expect(cli("for-each-ref", "--format=%(refname:short) %(objecttype) %(*objectname)", "refs/tags")).toBe(
      `gen-1 tag ${s1.commit}\ngen-2 tag ${s2.commit}`,
    );
    expect(cli("tag", "-l", "--format=%(contents:subject)", "gen-2")).toBe(change.title);
    const trailers = execFileSync("git", ["interpret-trailers", "--parse"], {
      input: cli("tag", "-l", "--format=%(contents)", "gen-2"),
      encoding: "utf8",
    });
    expect(trailers.trim().split("\n")).toEqual([
      `Change: ${f.changeId}`,
      `Candidate: ${s2.candidateId}`,
      "Generation: 2",
      "Approved-by: Ada Approver <ada@example.com>",
    ]);
    expect(cli("tag", "-l", "--format=%(contents)", "gen-1")).toContain("Approved-by: nobody");
    // A repeat tags nothing new and moves no tag.
    expect((await syncCanonical(f.deps, f.projectId, 2)).tagged).toEqual([]);
    expect(cli("rev-parse", "gen-2^{commit}")).toBe(s2.commit);
  });

  it("concurrent syncs of one project (indexer and release) never move main backwards", async () => {
    const f = await promotionFixture(t.db);
    await f.promote({ "a.txt": "a\n" });
    const s2 = await f.promote({ "b.txt": "b\n" });
    const results = await Promise.all([
      syncCanonical(f.deps, f.projectId, 1),
      syncCanonical(f.deps, f.projectId, 2),
      syncCanonical(f.deps, f.projectId, 1),
    ]);
    expect(results.filter((r) => r.outcome === "advanced").length).toBeGreaterThanOrEqual(1);
    expect(await f.store.head(f.projectId, await f.token(f.projectId, "read"))).toBe(s2.commit);
  });

  it("repairs a code store a crash left out after main had moved", async () => {
    const f = await promotionFixture(t.db);
    const s1 = await f.promote({ "src/cart.ts": "export const cart = 1;\n" });
    await syncCanonical(f.deps, f.projectId, 1);
    await f.blobs.delete(sourceKeys.code(f.projectId, s1.tree));
    const r = await syncCanonical(f.deps, f.projectId, 1);
    expect(r).toMatchObject({ outcome: "already", published: [1] });
    expect(await codeOf(f, s1.tree)).not.toBeNull();
  });

  it("refuses to move a main that is not at a generation's commit, and never forces it", async () => {
    const f = await promotionFixture(t.db);
    await f.promote({ "src/cart.ts": "export const cart = 1;\n" });
    // Someone pushed straight onto canonical main.
    const dir = join(f.root, "rogue");
    await f.store.checkout(f.projectId, await f.token(f.projectId, "read"), dir);
    writeFileSync(join(dir, "rogue.txt"), "x\n");
    const rogue = await f.store.commitAll(dir, "rogue", { name: "x", email: "x@localhost" });
    await f.store.push(dir, f.projectId, await f.token(f.projectId, "write"));
    await expect(syncCanonical(f.deps, f.projectId, 1)).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await f.store.head(f.projectId, await f.token(f.projectId, "read"))).toBe(rogue);
  });

  it("fastForward is a compare-and-swap on the old commit and takes only descendants", async () => {
    const f = await promotionFixture(t.db);
    const s1 = await f.promote({ "src/cart.ts": "export const cart = 1;\n" });
    const s2 = await f.promote({ "src/cart.ts": "export const cart = 2;\n" });
    const ff = async (from: string, expectedOld: string, next: string) =>
      f.store.fastForward(
        f.projectId,
        await f.token(f.projectId, "write"),
        from,
        await f.token(from, "read"),
        expectedOld,
        next,
      );
    // main is at S0, not S1.
    await expect(ff(s2.fork, s1.commit, s2.commit)).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await ff(s1.fork, f.s0.commit, s1.commit)).toBe("advanced");
    expect(await ff(s1.fork, f.s0.commit, s1.commit)).toBe("already");
    // S0 does not descend from S1: going back is refused.
    await expect(ff(s1.fork, s1.commit, f.s0.commit)).rejects.toMatchObject({ code: "CONFLICT" });
    // A read token cannot move main.
    await expect(
      f.store.fastForward(
        f.projectId,
        await f.token(f.projectId, "read"),
        s2.fork,
        await f.token(s2.fork, "read"),
        s1.commit,
        s2.commit,
      ),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await f.store.head(f.projectId, await f.token(f.projectId, "read"))).toBe(s1.commit);
  });
});
