import { DomainError } from "@rhumbatron/core";
import { useTestDatabase } from "@rhumbatron/db/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { afterCommitNudger, pgNotifyNudger } from "./nudge.ts";
import { withTransaction } from "./transaction.ts";

const t = useTestDatabase();

/** A LISTEN client that records every notification it receives, in order. */
let listener: pg.Client;
const received: { channel: string; payload: string | undefined }[] = [];
let onReceive = () => {};

beforeAll(async () => {
  listener = new pg.Client({ connectionString: t.url });
  await listener.connect();
  listener.on("notification", (n) => {
    received.push({ channel: n.channel, payload: n.payload });
    onReceive();
  });
  await listener.query("LISTEN rhumbatron_probe");
});
afterAll(async () => {
  await listener?.end();
});

function nextNotification() {
  const seen = received.length;
  return new Promise<(typeof received)[number]>((resolve) => {
    onReceive = () => {
      const n = received[seen];
      if (n) resolve(n);
    };
  });
}

class Rollback extends Error {}

describe("pgNotifyNudger", () => {
  it("delivers on commit, on the prefixed channel, and not at all when the transaction rolls back", async () => {
    received.length = 0;
    const first = nextNotification();
    await withTransaction(t.db, (ctx) => pgNotifyNudger.nudge(ctx, "probe", "committed"));
    expect(await first).toEqual({ channel: "rhumbatron_probe", payload: "committed" });

    await expect(
      withTransaction(t.db, async (ctx) => {
        await pgNotifyNudger.nudge(ctx, "probe", "rolled-back");
        throw new Rollback();
      }),
    ).rejects.toBeInstanceOf(Rollback);
    // Postgres delivers notifications in commit order, so if the rolled-back one had been sent,
    // it would arrive before this one.
    const next = nextNotification();
    await withTransaction(t.db, (ctx) => pgNotifyNudger.nudge(ctx, "probe"));
    expect(await next).toEqual({ channel: "rhumbatron_probe", payload: "" });
    expect(received.map((n) => n.payload)).toEqual(["committed", ""]);
  });

  it("rejects invalid channel names and oversized payloads with INVALID_INPUT", async () => {
    for (const bad of ["Probe", "1probe", "probe-x", "", "a".repeat(53)]) {
      const err = await withTransaction(t.db, (ctx) => pgNotifyNudger.nudge(ctx, bad)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).code).toBe("INVALID_INPUT");
    }
    const big = await withTransaction(t.db, (ctx) => pgNotifyNudger.nudge(ctx, "probe", "x".repeat(8000))).catch(
      (e: unknown) => e,
    );
    expect((big as DomainError).code).toBe("INVALID_INPUT");
  });
});

describe("afterCommitNudger", () => {
  it("sends the bare channel after commit and never on rollback", async () => {
    const sent: [string, string | undefined][] = [];
    const nudger = afterCommitNudger(async (channel, payload) => {
      sent.push([channel, payload]);
    });
    await expect(
      withTransaction(t.db, async (ctx) => {
        await nudger.nudge(ctx, "probe", "rolled-back");
        throw new Rollback();
      }),
    ).rejects.toBeInstanceOf(Rollback);
    await withTransaction(t.db, async (ctx) => {
      await nudger.nudge(ctx, "probe", "p1");
      expect(sent).toEqual([]); // not yet: the transaction is still open
    });
    expect(sent).toEqual([["probe", "p1"]]);
    await expect(withTransaction(t.db, (ctx) => nudger.nudge(ctx, "Bad"))).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
  });
});
