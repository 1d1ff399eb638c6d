import { streamIndex } from "@rhumbatron/core";
import { blockStreamOffset, seedChange, seedProjects, testEvent, useTestDatabase } from "@rhumbatron/db/testing";
import { appendToOutbox, withTransaction } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { captureLogs, testConfig, testIdentity } from "../testing.ts";
import { outboxPublisherFunction } from "./outbox-publisher.ts";

const t = useTestDatabase();
const silent = { nudge: async () => {} };

describe("the outbox publisher function", () => {
  it("logs a failed batch statement, records the failure on the row, and publishes once the stream is free", async () => {
    await seedProjects(t.db, ["proj_pf"]);
    await seedChange(t.db, "proj_pf", "chg_pf");
    const events = ["a", "b"].map((k) =>
      testEvent("task.ready", { projectId: "proj_pf", changeId: "chg_pf", taskId: k, payload: { key: k } }),
    );
    await withTransaction(t.db, (ctx) => appendToOutbox(ctx, events, { config: testConfig, nudger: silent }));
    // Another writer took the stream's next offset behind the head's back: the batch's INSERT fails.
    const inTheWay = await blockStreamOffset(t.db, streamIndex("proj_pf", testConfig.streams.count));
    const logs = captureLogs();
    const fn = outboxPublisherFunction(testConfig, silent);
    const run = (at: Date) =>
      fn.handler({
        db: t.db,
        config: testConfig,
        logger: logs.logger,
        now: () => at,
        key: "test",
        trigger: "cron",
        worker: testIdentity(),
      }) as Promise<{ published: number; failedProjects: number }>;
    const t0 = new Date();
    expect(await run(t0)).toMatchObject({ published: 0, failedProjects: 1 });
    const warned = logs.lines.filter((l) => l.level === 40).map((l) => l.msg);
    expect(warned).toEqual([
      "the outbox batch failed; publishing one project at a time this run",
      "outbox rows failed to publish",
    ]);
    // The stream's head catches up with the entry in the way; the row's retry comes due and goes out.
    await inTheWay.free();
    expect(await run(new Date(t0.getTime() + 60_000))).toMatchObject({ published: 2, failedProjects: 0 });
  });
});
