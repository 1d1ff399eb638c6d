import { describe, expect, it } from "vitest";
import { buildAgentPacket, buildReviewPacket, contextItemIds, type FileIndex } from "./packet.ts";

const file = (path: string, size = 100) => ({ path, blob: `b-${path}`, size, stored: true });
const index: FileIndex = {
  projectId: "proj_x",
  commit: "c0",
  tree: "t0",
  files: [
    file("README.md"),
    file("package.json"),
    file("src/cart.ts"),
    file("src/wishlist.ts"),
    file("src/lib/money.ts"),
    file("src/lib/format.ts"),
    file("src/shippingRates.ts"),
    file("test/cart.test.ts"),
    file("test/wishlist.test.ts"),
  ],
};
const task = (over: Partial<Parameters<typeof buildAgentPacket>[2]> = {}) => ({
  title: "Show a count",
  intents: { paths: [], prefixes: [] },
  planPaths: [],
  ...over,
});

describe("buildAgentPacket", () => {
  it("picks declared paths, plan paths, prefixes, title words, their tests and the overview, in that order", () => {
    const p = buildAgentPacket(
      "ctxp_1",
      index,
      task({
        title: "Add the wishlist count to shipping rates",
        intents: { paths: ["src/cart.ts", "src/new-file.ts"], prefixes: ["src/lib/"] },
      }),
      { indexSource: "stored" },
    );
    expect(p.items.map((i) => [i.id, i.path, i.why])).toEqual([
      ["ctx_1", "src/cart.ts", "a path the Task declares"],
      ["ctx_2", "src/lib/format.ts", "under src/lib/, a prefix the Task declares"],
      ["ctx_3", "src/lib/money.ts", "under src/lib/, a prefix the Task declares"],
      ["ctx_4", "src/shippingRates.ts", 'its name carries "shipping" from the Task\'s title'],
      ["ctx_5", "src/wishlist.ts", 'its name carries "wishlist" from the Task\'s title'],
      ["ctx_6", "test/wishlist.test.ts", 'its name carries "wishlist" from the Task\'s title'],
      ["ctx_7", "test/cart.test.ts", "a test of a picked file"],
      ["ctx_8", "README.md", "the project's overview"],
      ["ctx_9", "package.json", "the project's overview"],
    ]);
    expect(p.items[0]).toMatchObject({ blob: "b-src/cart.ts", size: 100 });
    expect(p).toMatchObject({ id: "ctxp_1", purpose: "agent_run", tree: "t0", indexSource: "stored", omitted: [] });
    expect(p.note).toBe("declared but not in the index (new files): src/new-file.ts");
    expect(p.budget.usedBytes).toBe(900);
  });

  it("is the same packet for the same index and Task, whatever order the index lists its files in", () => {
    const t = task({ intents: { paths: ["src/cart.ts"], prefixes: ["src/"] } });
    const a = buildAgentPacket("p", index, t, { indexSource: "stored" });
    const b = buildAgentPacket("p", { ...index, files: [...index.files].reverse() }, t, { indexSource: "stored" });
    expect(b).toEqual(a);
  });

  it("stops at the budget and lists what did not fit as omitted, never as an item", () => {
    const big = { ...index, files: [...index.files, file("src/wishlist-big.ts", 5000)] };
    const p = buildAgentPacket(
      "p",
      big,
      task({ intents: { paths: ["src/wishlist-big.ts", "src/cart.ts", "src/wishlist.ts"], prefixes: [] } }),
      { indexSource: "built", note: "index was missing", budget: { maxBytes: 1000, maxItems: 2 } },
    );
    expect(p.items.map((i) => i.path)).toEqual(["src/cart.ts", "src/wishlist.ts"]);
    expect(p.omitted.map((o) => o.path)).toEqual([
      "src/wishlist-big.ts",
      "test/cart.test.ts",
      "test/wishlist.test.ts",
      "README.md",
      "package.json",
    ]);
    expect(p.omitted[0]?.why).toMatch(/over the budget of 2 items, 1000 bytes/);
    expect(p.note).toBe("index was missing");
    expect([...contextItemIds(p)]).toEqual(["ctx_1", "ctx_2"]);
  });
});

describe("buildReviewPacket", () => {
  const v = (path: string, why: string, size = 10) => ({ path, blob: `${why}-${path}`, size, why });
  it("numbers every version of every file, by path, and keeps a file's versions together within the budget", () => {
    const p = buildReviewPacket(
      "ctxp_crev_1",
      "t1",
      [
        { path: "src/z.ts", versions: [v("src/z.ts", "base"), v("src/z.ts", "a")] },
        { path: "src/a.ts", versions: [v("src/a.ts", "base"), v("src/a.ts", "a"), v("src/a.ts", "b")] },
        { path: "src/big.ts", versions: [v("src/big.ts", "base", 50), v("src/big.ts", "a", 50)] },
      ],
      { maxBytes: 60, maxItems: 10 },
    );
    expect(p.items.map((i) => [i.id, i.path, i.why])).toEqual([
      ["ctx_1", "src/a.ts", "base"],
      ["ctx_2", "src/a.ts", "a"],
      ["ctx_3", "src/a.ts", "b"],
      ["ctx_4", "src/z.ts", "base"],
      ["ctx_5", "src/z.ts", "a"],
    ]);
    expect(p.omitted).toEqual([{ path: "src/big.ts", why: "its 2 versions do not fit the review's budget" }]);
    expect(p).toMatchObject({ purpose: "conflict_review", indexSource: "none", budget: { usedBytes: 50 } });
  });
});
