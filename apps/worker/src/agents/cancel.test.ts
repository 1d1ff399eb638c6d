import { cancelChange } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { stoppedAfterEach } from "../test-hooks.ts";
import { createScriptedChange, provisionedProject, startFullWorker, testWorld, waitUntil } from "../test-world.ts";
import { sleepStillRunning } from "../testing.ts";

/**
 * Cancelling a Change while its Agent works, on the whole worker: the command in flight ends with
 * its children, nothing is published, the run and the Task say why, and a repeat answers the same.
 */
const t = useTestDatabase();
const running = stoppedAfterEach();

const MARKER = "31.4159";

describe("cancel", () => {
  it("stops a running Agent run, ends its Sandbox processes and publishes nothing", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    running.push(await startFullWorker(w, t.url));
    const changeId = await createScriptedChange(w, projectId, {
      requestId: "cancel-me",
      title: "A long Task",
      landWhenReady: true,
      tasks: [
        {
          key: "a",
          editPlan: [
            { op: "write", path: "src/half.ts", content: "export const half = 1;\n" },
            { op: "run", argv: ["node", "-e", `require("child_process").spawnSync("sleep", ["${MARKER}"])`] },
          ],
        },
      ],
    });
    await waitUntil(
      "the Agent's command to run",
      () => sleepStillRunning(MARKER),
      (x) => x,
      120_000,
    );

    const first = await cancelChange(
      t.db,
      { tenantId: "ten_a", changeId, actorId: "usr_c", reason: "not needed" },
      w.deps,
    );
    expect(first).toEqual({ cancelled: true, candidates: [] });
    const run = await waitUntil(
      "the run to stop",
      () => t.db.agentRun.findFirst({ where: { changeId } }),
      (r) => r?.status === "cancelled",
      120_000,
    );
    expect(run?.error).toBe("the Change was cancelled");
    expect(await sleepStillRunning(MARKER)).toBe(false);
    expect(await t.db.task.findFirstOrThrow({ where: { changeId } })).toMatchObject({
      state: "blocked",
      blockedLimit: "cancelled",
    });
    expect(await t.db.changeSet.count({ where: { changeId } })).toBe(0);
    expect(await t.db.change.findUniqueOrThrow({ where: { id: changeId } })).toMatchObject({
      status: "cancelled",
      landWhenReady: false,
    });
    // The reservation is settled: nothing stays open on the meter.
    await waitUntil(
      "the reservation to be settled",
      () => t.db.usageCounter.count({ where: { counter: "sandbox_reservation" } }),
      (n) => n === 0,
      60_000,
    );
    const events = await t.db.outboxRow.count({ where: { eventType: "change.cancelled" } });
    expect(events).toBe(1);
    expect(
      await cancelChange(t.db, { tenantId: "ten_a", changeId, actorId: "usr_c", reason: "again" }, w.deps),
    ).toEqual(first);
    expect(await t.db.outboxRow.count({ where: { eventType: "change.cancelled" } })).toBe(1);
    await expect(
      cancelChange(t.db, { tenantId: "ten_other", changeId, actorId: "usr_x", reason: "x" }, w.deps),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
  }, 300_000);
});
