import { seedProjects, useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { withTransaction } from "../transaction.ts";
import { retryOnDeadlock } from "./consumer.ts";

/**
 * A consumer group's transaction chosen as a deadlock's victim runs again (consumer.ts): two
 * transactions lock two projects' rows in opposite orders on the real Postgres; one is the victim,
 * and both end applied.
 */
const t = useTestDatabase();

/** Resolves when `n` parties have arrived: each transaction holds its first lock before either takes its second. */
function barrier(n: number) {
  let arrived = 0;
  let open!: () => void;
  const all = new Promise<void>((r) => {
    open = r;
  });
  return async () => {
    arrived++;
    if (arrived === n) open();
    await all;
  };
}

describe("retryOnDeadlock", () => {
  it("runs the deadlock's victim again, so both sides apply", async () => {
    await seedProjects(t.db, ["proj_dl_a", "proj_dl_b"]);
    const meet = barrier(2);
    let attempts = 0;
    const lockBoth = (first: string, second: string, met: { done: boolean }) =>
      retryOnDeadlock(() =>
        withTransaction(t.db, async (ctx) => {
          attempts++;
          await ctx.tx.$queryRaw`SELECT id FROM projects WHERE id = ${first} FOR UPDATE`;
          // Both hold their first row before either asks for its second, the first time round.
          if (!met.done) {
            met.done = true;
            await meet();
          }
          await ctx.tx.$queryRaw`SELECT id FROM projects WHERE id = ${second} FOR UPDATE`;
          await ctx.tx.$executeRaw`UPDATE projects SET name = ${`${first} then ${second}`} WHERE id = ${first}`;
          return first;
        }),
      );
    const results = await Promise.all([
      lockBoth("proj_dl_a", "proj_dl_b", { done: false }),
      lockBoth("proj_dl_b", "proj_dl_a", { done: false }),
    ]);
    expect(results).toEqual(["proj_dl_a", "proj_dl_b"]);
    // One of them ran twice: Postgres broke the deadlock by rolling it back.
    expect(attempts).toBe(3);
    const names = await t.db.project.findMany({
      where: { id: { in: ["proj_dl_a", "proj_dl_b"] } },
      orderBy: { id: "asc" },
    });
    expect(names.map((p) => p.name)).toEqual(["proj_dl_a then proj_dl_b", "proj_dl_b then proj_dl_a"]);
  });

  it("gives up on anything but a deadlock at once, and on a deadlock that keeps coming back", async () => {
    let calls = 0;
    await expect(
      retryOnDeadlock(async () => {
        calls++;
        throw new Error("unique constraint");
      }),
    ).rejects.toThrow("unique constraint");
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      retryOnDeadlock(async () => {
        calls++;
        throw new Error("Raw query failed. Code: `40P01`. Message: `deadlock detected`");
      }),
    ).rejects.toThrow("deadlock detected");
    expect(calls).toBe(4);
  });
});
