import { describe, expect, it } from "vitest";
import { createDb } from "../client.ts";
import { useTestDatabase } from "../testing/index.ts";
import {
  type AttemptKey,
  beginSignInAttempt,
  clearSignInAttempts,
  forgetSignInAttempts,
  pruneSignInAttempts,
} from "./sign-in-attempts.ts";

const t = useTestDatabase();
const limit = { max: 3, windowMs: 60_000 };
const at = (ms: number) => new Date(Date.parse("2026-12-01T09:00:00Z") + ms);
const account = (key: string): AttemptKey => ({ scope: "account", key, limit });
const address = (key: string): AttemptKey => ({ scope: "address", key, limit: { max: 5, windowMs: 60_000 } });

describe("sign-in attempts in Postgres", () => {
  it("blocks a key at its limit until the oldest counted attempt leaves the window; a refusal is not counted", async () => {
    for (const ms of [0, 10_000, 20_000])
      expect((await beginSignInAttempt(t.db, [account("a")], at(ms))).ok).toBe(true);
    expect(await beginSignInAttempt(t.db, [account("a")], at(30_000))).toEqual({
      ok: false,
      blocked: [{ scope: "account", until: at(60_000) }],
    });
    expect((await beginSignInAttempt(t.db, [account("b")], at(30_000))).ok).toBe(true);
    expect(await beginSignInAttempt(t.db, [account("a")], at(59_999))).toMatchObject({ ok: false });
    expect((await beginSignInAttempt(t.db, [account("a")], at(60_000))).ok).toBe(true);
    expect(await beginSignInAttempt(t.db, [account("a")], at(60_001))).toEqual({
      ok: false,
      blocked: [{ scope: "account", until: at(70_000) }],
    });
    // What left the window was deleted when the key was tried again: the key keeps at most its limit.
    expect(await t.db.signInAttempt.count({ where: { scope: "account", key: "a" } })).toBe(3);
  });

  it("records under every key only when none is blocked, and names each blocked key", async () => {
    for (const ms of [0, 1, 2]) await beginSignInAttempt(t.db, [account("c"), address("198.51.100.1")], at(ms));
    const r = await beginSignInAttempt(t.db, [account("c"), address("198.51.100.1")], at(3));
    expect(r).toEqual({ ok: false, blocked: [{ scope: "account", until: at(60_000) }] });
    // The refused attempt was not counted against the address either.
    expect(await t.db.signInAttempt.count({ where: { scope: "address", key: "198.51.100.1" } })).toBe(3);
  });

  it("takes back one attempt, or clears a key", async () => {
    const ids: bigint[] = [];
    for (const ms of [0, 1, 2]) {
      const r = await beginSignInAttempt(t.db, [account("d")], at(ms));
      if (r.ok) ids.push(...r.ids.map((x) => x.id));
    }
    await forgetSignInAttempts(t.db, [ids[1] as bigint]);
    expect((await beginSignInAttempt(t.db, [account("d")], at(3))).ok).toBe(true);
    expect((await beginSignInAttempt(t.db, [account("d")], at(4))).ok).toBe(false);
    expect(await clearSignInAttempts(t.db, "account", "d")).toBe(3);
    expect((await beginSignInAttempt(t.db, [account("d")], at(5))).ok).toBe(true);
  });

  it("lets exactly the limit through of parallel attempts, from two processes' clients", async () => {
    // A second client is a second web process: both count in the same table, under the same lock.
    const other = createDb(t.url, { maxConnections: 5 });
    try {
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          beginSignInAttempt(i % 2 ? other : t.db, [account("e"), address("198.51.100.9")], at(0)),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(3);
      expect(await t.db.signInAttempt.count({ where: { scope: "account", key: "e" } })).toBe(3);
      expect(await t.db.signInAttempt.count({ where: { scope: "address", key: "198.51.100.9" } })).toBe(3);
    } finally {
      await other.$disconnect();
    }
  });

  it("answers a burst far larger than the connection pool, every attempt counted once", async () => {
    // A web process has a small pool; a burst of sign-ins must wait for it, never fail with a 500.
    const small = createDb(t.url, { maxConnections: 1 });
    try {
      const results = await Promise.all(
        Array.from({ length: 1000 }, (_, i) => beginSignInAttempt(small, [account(`burst${i % 100}`)], at(i))),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(100 * limit.max);
      expect(await t.db.signInAttempt.count({ where: { key: { startsWith: "burst" } } })).toBe(100 * limit.max);
    } finally {
      await small.$disconnect();
    }
  });

  it("prunes attempts older than a time, in bounded batches", async () => {
    for (const ms of [0, 1, 2]) await beginSignInAttempt(t.db, [account(`f${ms}`)], at(-3_600_000 + ms));
    await beginSignInAttempt(t.db, [account("g")], at(0));
    expect(await pruneSignInAttempts(t.db, at(-60_000), 2)).toBe(2);
    expect(await pruneSignInAttempts(t.db, at(-60_000), 2)).toBe(1);
    expect(await t.db.signInAttempt.count({ where: { key: "g" } })).toBe(1);
    expect(await t.db.signInAttempt.count({ where: { key: { startsWith: "f" } } })).toBe(0);
  });
});
