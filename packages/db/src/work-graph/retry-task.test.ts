import { loadConfig } from "@rhumbatron/core";
import { pgNotifyNudger } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { seedChange, seedProjects, useTestDatabase } from "../testing/index.ts";
import { withTransaction } from "../transaction.ts";
import { dispatchChange } from "./dispatch.ts";
import { retryTask } from "./retry-task.ts";

const t = useTestDatabase();
const deps = { config: loadConfig("dev"), nudger: pgNotifyNudger, now: () => new Date() };

async function world(project: string) {
  await seedProjects(t.db, [project]);
  const change = `chg_${project}`;
  await seedChange(t.db, project, change);
  await t.db.task.createMany({
    data: [
      {
        id: `task_${project}_a`,
        changeId: change,
        key: "a",
        title: "a",
        state: "failed",
        dispatched: true,
        agentId: "agt_x",
      },
      {
        id: `task_${project}_b`,
        changeId: change,
        key: "b",
        title: "b",
        state: "pending",
        dependencies: ["a"],
        position: 1,
      },
    ],
  });
  await t.db.agentRun.create({
    data: {
      id: `run_${project}_1`,
      taskId: `task_${project}_a`,
      changeId: change,
      agentId: "agt_x",
      wakeCommandId: `cmd_task_${project}_a_ready`,
      reason: "dispatch",
      status: "failed",
    },
  });
  return { change, a: `task_${project}_a`, b: `task_${project}_b` };
}

const counts = async () => ({
  outbox: await t.db.outboxRow.count(),
  queue: await t.db.queueMessage.count(),
  tasks: JSON.stringify(await t.db.task.findMany({ orderBy: { id: "asc" } })),
});

describe("retrying a Task", () => {
  it("makes a new attempt with its own wake command and Event IDs, and keeps the failed run's record", async () => {
    const { change, a } = await world("proj_rt1");
    const r = await retryTask(t.db, { tenantId: "ten_test", taskId: a, actorId: "usr_1" }, deps);
    expect(r).toEqual({ taskId: a, attempt: 2 });
    expect(await t.db.task.findUniqueOrThrow({ where: { id: a } })).toMatchObject({
      state: "pending",
      attempt: 2,
      dispatched: false,
      agentId: null,
      blockedLimit: null,
    });
    const retried = await t.db.outboxRow.findMany({ where: { eventType: "task.retried" } });
    expect(retried.map((row) => (row.envelope as { payload: unknown }).payload)).toEqual([
      { key: "a", attempt: 2, previousState: "failed" },
    ]);
    expect(await t.db.queueMessage.count({ where: { commandId: `cmd_retry_${a}_a2` } })).toBe(1);

    // The dispatch readies it and wakes it under the attempt's own command ID.
    await withTransaction(t.db, (ctx) => dispatchChange(ctx, change, deps, null));
    expect((await t.db.task.findUniqueOrThrow({ where: { id: a } })).state).toBe("ready");
    expect(await t.db.queueMessage.count({ where: { commandId: `cmd_${a}_ready_a2` } })).toBe(1);
    // The first attempt's run stays as it was.
    expect(await t.db.agentRun.findMany({ where: { taskId: a } })).toMatchObject([{ status: "failed" }]);

    // Retrying again makes attempt 3, a different command again.
    await t.db.task.update({ where: { id: a }, data: { state: "blocked", blockedLimit: "sandbox_meter" } });
    expect(await retryTask(t.db, { tenantId: "ten_test", taskId: a, actorId: "usr_1" }, deps)).toEqual({
      taskId: a,
      attempt: 3,
    });
    expect(await t.db.queueMessage.count({ where: { commandId: `cmd_retry_${a}_a3` } })).toBe(1);
  });

  it("refuses what cannot be retried with a typed error, writing nothing", async () => {
    const { change, b } = await world("proj_rt2");
    const before = await counts();
    await expect(retryTask(t.db, { tenantId: "ten_test", taskId: b, actorId: "u" }, deps)).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringMatching(/task b is pending; only a failed or blocked Task can be retried/),
    });
    await expect(retryTask(t.db, { tenantId: "ten_other", taskId: b, actorId: "u" }, deps)).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(
      retryTask(t.db, { tenantId: "ten_test", taskId: "task_nope", actorId: "u" }, deps),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await t.db.change.update({ where: { id: change }, data: { status: "cancelled" } });
    const cancelled = await counts();
    await expect(
      retryTask(t.db, { tenantId: "ten_test", taskId: `task_proj_rt2_a`, actorId: "u" }, deps),
    ).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringMatching(/the change is cancelled/) });
    expect(await counts()).toEqual(cancelled);
    expect(before.outbox).toBe(cancelled.outbox);
  });

  it("re-runs a completed Task once the Change's newest Candidate was rejected, not while it verifies or after it verified", async () => {
    const { change, a } = await world("proj_rt3");
    await t.db.task.update({ where: { id: a }, data: { state: "completed" } });
    await t.db.change.update({ where: { id: change }, data: { status: "verifying" } });
    const candidate = (status: string, rejectionReason: string | null = null) =>
      t.db.candidate.upsert({
        where: { id: "cand_rt3" },
        create: {
          id: "cand_rt3",
          projectId: "proj_rt3",
          changeId: change,
          compositionKey: "ck_rt3",
          baseGeneration: 0,
          baseCommit: "0".repeat(40),
          status,
          rejectionReason,
        },
        update: { status, rejectionReason },
      });
    for (const status of ["verifying", "verified"]) {
      await candidate(status);
      const before = await counts();
      await expect(retryTask(t.db, { tenantId: "ten_test", taskId: a, actorId: "u" }, deps)).rejects.toMatchObject({
        code: "PRECONDITION_FAILED",
        message: expect.stringContaining(
          "or a completed one whose Change's newest Candidate conflicted or was rejected",
        ),
      });
      expect(await counts()).toEqual(before);
    }
    // Rejected by a check (a broken build, say): the Task runs again and the Change is open again,
    // so its next Candidate is composed on the generation current then.
    await candidate("rejected", "1 gap");
    expect(await retryTask(t.db, { tenantId: "ten_test", taskId: a, actorId: "u" }, deps)).toEqual({
      taskId: a,
      attempt: 2,
    });
    expect(await t.db.change.findUniqueOrThrow({ where: { id: change } })).toMatchObject({ status: "open" });
    expect(await t.db.task.findUniqueOrThrow({ where: { id: a } })).toMatchObject({ state: "pending", attempt: 2 });
  });
});
