import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { releaseLease, renewLease, tryTakeLease, withLease } from "./resource-lease.ts";

/**
 * Named leases on the real database: one holder at a time, a dead holder's lease free once it ran
 * out, renewal and release by the holder only, and withLease serializing two workers' work without
 * a transaction open (the source sync's lock, apps/worker/src/source/sync.ts).
 */
const t = useTestDatabase();
const t0 = new Date("2026-07-01T10:00:00Z");
const at = (ms: number) => new Date(t0.getTime() + ms);

describe("a named lease", () => {
  it("has one holder until it is released or runs out; only its holder renews or releases it", async () => {
    expect(await tryTakeLease(t.db, "sync:a", "w1", 1_000, at(0))).toBe(true);
    // Taking it again is the holder's own renewal; another holder waits.
    expect(await tryTakeLease(t.db, "sync:a", "w1", 1_000, at(10))).toBe(true);
    expect(await tryTakeLease(t.db, "sync:a", "w2", 1_000, at(500))).toBe(false);
    expect(await renewLease(t.db, "sync:a", "w2", 1_000, at(500))).toBe(false);
    await releaseLease(t.db, "sync:a", "w2");
    expect(await tryTakeLease(t.db, "sync:a", "w2", 1_000, at(900))).toBe(false);
    // The holder renews: still held past its first end.
    expect(await renewLease(t.db, "sync:a", "w1", 1_000, at(900))).toBe(true);
    expect(await tryTakeLease(t.db, "sync:a", "w2", 1_000, at(1_500))).toBe(false);
    // The holder died (no renewal): free once it ran out, and the old holder cannot renew it.
    expect(await tryTakeLease(t.db, "sync:a", "w2", 1_000, at(2_000))).toBe(true);
    expect(await renewLease(t.db, "sync:a", "w1", 1_000, at(2_001))).toBe(false);
    await releaseLease(t.db, "sync:a", "w2");
    expect(await tryTakeLease(t.db, "sync:a", "w3", 1_000, at(2_002))).toBe(true);
    // Another name is another lease.
    expect(await tryTakeLease(t.db, "sync:b", "w1", 1_000, at(2_002))).toBe(true);
  });

  it("withLease runs two workers' work one after the other, with no transaction open, and lets go on a throw", async () => {
    const order: string[] = [];
    let releaseFirst = () => {};
    const firstHolds = new Promise<void>((r) => {
      releaseFirst = r;
    });
    let firstStarted = () => {};
    const started = new Promise<void>((r) => {
      firstStarted = r;
    });
    const first = withLease(t.db, "sync:c", { ttlMs: 30_000, waitMs: 30_000, pollMs: 10 }, async () => {
      order.push("first in");
      firstStarted();
      await firstHolds;
      // No transaction is open around the work: another connection sees the lease row committed.
      const rows = await t.db.resourceLease.findMany({ where: { name: "sync:c" } });
      expect(rows).toHaveLength(1);
      order.push("first out");
    });
    await started;
    const second = withLease(t.db, "sync:c", { ttlMs: 30_000, waitMs: 30_000, pollMs: 10 }, async () => {
      order.push("second");
    });
    // The second is waiting for the lease: it has not run while the first holds it.
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(["first in"]);
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(["first in", "first out", "second"]);
    await expect(
      withLease(t.db, "sync:c", { ttlMs: 30_000, waitMs: 1_000 }, async () => {
        throw new Error("the git work failed");
      }),
    ).rejects.toThrow("the git work failed");
    expect(await t.db.resourceLease.count({ where: { name: "sync:c" } })).toBe(0);
  });

  it("gives up with UNAVAILABLE when another holds it past waitMs", async () => {
    expect(await tryTakeLease(t.db, "sync:d", "someone", 60_000, new Date())).toBe(true);
    await expect(
      withLease(t.db, "sync:d", { ttlMs: 1_000, waitMs: 50, pollMs: 10 }, async () => "never"),
    ).rejects.toMatchObject({ code: "UNAVAILABLE" });
  });
});
