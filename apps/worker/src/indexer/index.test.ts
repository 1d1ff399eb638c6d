import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildSearchIndex, searchIndexKey, searchProjectIndex, termsOf } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { consumeQueue, enqueueCommand, withTransaction } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { promotionFixture } from "../source/promotion.testing.ts";
import { manualClock } from "../testing.ts";
import { indexingHandlers } from "./index.ts";

const t = useTestDatabase();

async function setup() {
  const clock = manualClock("2026-10-02T00:00:00Z");
  const f = await promotionFixture(t.db, { now: clock.now });
  const handlers = indexingHandlers(f.deps);
  const qdeps = { config: f.config, nudger: f.deps.nudger, now: clock.now, owner: "test-indexer" };
  const send = (commandType: "index.build" | "index.purge", commandId: string, payload: Record<string, unknown>) =>
    withTransaction(t.db, (ctx) =>
      enqueueCommand(ctx, { commandId, commandType, projectId: f.projectId, payload }, { ...qdeps }),
    );
  /** Runs the indexing consumer until its queue is empty, moving the clock past each retry delay. */
  const drain = async () => {
    const actions: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await consumeQueue(t.db, "indexing", handlers, qdeps);
      for (const [a, n] of Object.entries(r.actions)) for (let k = 0; k < n; k++) actions.push(a);
      if ((await t.db.queueMessage.count({ where: { queue: "indexing" } })) === 0) break;
      clock.set(new Date(clock.now().getTime() + 31_000).toISOString());
    }
    return actions;
  };
  const rows = () => t.db.projectIndex.findMany({ where: { projectId: f.projectId }, orderBy: { createdAt: "asc" } });
  return { f, clock, send, drain, rows };
}

describe("the indexer", () => {
  it("index.build syncs canonical main, then indexes the generation's text files once", async () => {
    const { f, send, drain, rows } = await setup();
    const s1 = await f.promote({
      "src/cart.ts":
        "// the cart\nexport function addToCart(items: string[], item: string) {\n  return [...items, item];\n}\n",
      "assets/logo.png": "\u0089PNG\u0000\u0000binary",
      "big.txt": `${"needle ".repeat(160_000)}\n`,
    });
    await send("index.build", `cmd_index_${f.projectId}_S1`, { generation: 1 });
    expect(await drain()).toEqual(["ack"]);

    expect(await f.store.head(f.projectId, await f.token(f.projectId, "read"))).toBe(s1.commit);
    const [row, ...more] = await rows();
    expect(more).toEqual([]);
    // README, cart, wishlist: the binary file and the file over the size limit are left out.
    expect(row).toMatchObject({ status: "built", generation: 1, tree: s1.tree, files: 3 });
    expect(row?.indexKey).toBe(searchIndexKey(f.projectId, s1.tree));

    const search = (q: string) => searchProjectIndex(f.blobs, t.db, f.projectId, q);
    expect(await search("addToCart")).toEqual({
      generation: 1,
      tree: s1.tree,
      total: 1,
      hits: [{ path: "src/cart.ts", line: 2 }],
    });
    // Prefixes, identifier parts and every word of the query on one line.
    expect((await search("cart"))?.hits).toEqual([
      { path: "src/cart.ts", line: 1 },
      { path: "src/cart.ts", line: 2 },
    ]);
    expect((await search("WISHED"))?.hits).toEqual([{ path: "src/wishlist.ts", line: 1 }]);
    expect((await search("return item"))?.hits).toEqual([{ path: "src/cart.ts", line: 3 }]);
    expect((await search("needle"))?.total).toBe(0);
    expect((await search("shop"))?.hits).toEqual([{ path: "README.md", line: 1 }]);

    // The router sends the same command again for canonical.advanced; the same tree records nothing new.
    await send("index.build", `cmd_index_${f.projectId}_S1_again`, { generation: 1 });
    expect(await drain()).toEqual(["ack"]);
    expect(await rows()).toHaveLength(1);
  });

  it("index.purge deletes the project's index blobs and marks its rows purged", async () => {
    const { f, send, drain, rows } = await setup();
    await f.promote({ "a.ts": "const alpha = 1;\n" });
    await send("index.build", "cmd_i1", { generation: 1 });
    await f.promote({ "b.ts": "const beta = 2;\n" });
    await send("index.build", "cmd_i2", { generation: 2 });
    await drain();
    expect((await rows()).map((r) => [r.generation, r.status])).toEqual([
      [1, "built"],
      [2, "built"],
    ]);
    // The newest generation answers.
    expect(await searchProjectIndex(f.blobs, t.db, f.projectId, "beta")).toMatchObject({ generation: 2, total: 1 });

    await send("index.purge", "cmd_purge", {});
    await drain();
    expect((await rows()).map((r) => r.status)).toEqual(["purged", "purged"]);
    expect(await f.blobs.list(`index/${f.projectId}/`)).toEqual([]);
    expect(await searchProjectIndex(f.blobs, t.db, f.projectId, "beta")).toBeNull();
  });

  it("records a failed index row with the error once the retries are exhausted", async () => {
    const { f, send, drain, rows } = await setup();
    await f.promote({ "a.ts": "const alpha = 1;\n" });
    // Canonical main moved outside promotion: the sync refuses it every time.
    const dir = join(f.root, "rogue");
    await f.store.checkout(f.projectId, await f.token(f.projectId, "read"), dir);
    writeFileSync(join(dir, "rogue.txt"), "x\n");
    await f.store.commitAll(dir, "rogue", { name: "x", email: "x@localhost" });
    await f.store.push(dir, f.projectId, await f.token(f.projectId, "write"));

    await send("index.build", "cmd_fail", { generation: 1 });
    expect(await drain()).toEqual(["retry", "retry", "retry", "record_failure"]);
    const [row, ...more] = await rows();
    expect(more).toEqual([]);
    expect(row).toMatchObject({ status: "failed", generation: 1, indexKey: null });
    expect(row?.error).toMatch(/main is at .* which is no generation/);
  });

  it("tokenises identifiers into words and parts, and skips binary content", () => {
    expect([...termsOf("const addToCart = HTTPServer_url;")]).toEqual([
      "const",
      "addtocart",
      "add",
      "to",
      "cart",
      "httpserver_url",
      "http",
      "server",
      "url",
    ]);
    const idx = buildSearchIndex([
      { path: "a.bin", content: new Uint8Array([1, 0, 2]) },
      { path: "b.txt", content: new TextEncoder().encode("one\ntwo one\n") },
    ]);
    expect(idx).toEqual({ files: ["b.txt"], terms: { one: [0, 1, 0, 2], two: [0, 2] } });
  });
});
