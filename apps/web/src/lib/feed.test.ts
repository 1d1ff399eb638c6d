import { describe, expect, it } from "vitest";
import { mergeFeed } from "./feed.ts";

const row = (id: number) => ({ id: String(id) });
const ids = (rows: { id: string }[]) => rows.map((r) => Number(r.id));

describe("mergeFeed", () => {
  it("keeps the newest first, whatever order the rows arrive in", () => {
    let rows = [row(1), row(2), row(3)].reduce((acc, r) => mergeFeed(acc, r), [] as { id: string }[]);
    expect(ids(rows)).toEqual([3, 2, 1]);
    rows = mergeFeed(rows, row(10));
    rows = mergeFeed(rows, row(5));
    expect(ids(rows)).toEqual([10, 5, 3, 2, 1]);
  });

  it("ignores a row it already has (a reconnect that resends it)", () => {
    const rows = mergeFeed(mergeFeed([], row(1)), row(2));
    expect(mergeFeed(rows, row(1))).toBe(rows);
  });

  it("compares IDs as integers, not text", () => {
    expect(ids(mergeFeed([row(9)], row(10)))).toEqual([10, 9]);
  });

  it("drops the oldest rows past the limit", () => {
    let rows: { id: string }[] = [];
    for (let i = 1; i <= 5; i++) rows = mergeFeed(rows, row(i), 3);
    expect(ids(rows)).toEqual([5, 4, 3]);
  });
});
