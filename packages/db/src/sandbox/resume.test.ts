import { BUDGET_BLOCKED_TASK_RESUMES, DomainError, loadConfig } from "@rhumbatron/core";
import { pgNotifyNudger } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { seedChange, seedProjects, useTestDatabase } from "../testing/index.ts";
import { withTransaction } from "../transaction.ts";
import { cancelChange } from "../work-graph/complete-task.ts";
import { dispatchChange } from "../work-graph/dispatch.ts";
import { blockTaskForLimit } from "../work-graph/runs.ts";
import { setSandboxBudget } from "./budget.ts";
import { admitSandbox, reserveSandboxSeconds, SANDBOX_COUNTERS, sandboxMeterScope } from "./meter.ts";
import {
  resumeBudgetBlockedTasks,
  resumeBudgetBlockedTasksEverywhere,
  tenantsWithBudgetBlockedTasks,
} from "./resume.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
/** Work-graph dependencies with the clock stopped at `now`. */
const at = (now: Date) => ({ config, nudger: pgNotifyNudger, now: () => now });

async function refusal(p: Promise<unknown>): Promise<DomainError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

/** This month's meter of the tenant already holds `seconds` used. */
async function used(tenantId: string, window: string, seconds: number) {
  await t.db.usageCounter.create({
    data: {
      counter: SANDBOX_COUNTERS.usedSeconds,
      scopeId: sandboxMeterScope(config.env, tenantId),
      window,
      count: seconds,
    },
  });
}

/** A Task whose Agent run is about to start: running, with its run. */
async function runningTask(changeId: string, key: string) {
  const taskId = `task_${changeId}_${key}`;
  const runId = `run_${changeId}_${key}`;
  await t.db.task.create({
    data: { id: taskId, changeId, key, title: key, state: "running", dispatched: true, agentId: `agt_${taskId}` },
  });
  await t.db.agentRun.create({
    data: { id: runId, taskId, changeId, agentId: `agt_${taskId}`, wakeCommandId: `cmd_${taskId}`, reason: "dispatch" },
  });
  return { taskId, runId };
}

/** The Sandbox refuses the run (`refuse`) and the Task is blocked as the Agent runner blocks it. */
async function blockedBy(changeId: string, key: string, refuse: (runId: string) => Promise<unknown>, now: Date) {
  const { taskId, runId } = await runningTask(changeId, key);
  const err = await refusal(refuse(runId));
  await blockTaskForLimit(
    t.db,
    { changeId, taskId, runId, limit: "sandbox_meter", cause: err.details?.limit as string, reason: err.message },
    at(now),
  );
  return { taskId, err };
}

const byBudget = (changeId: string, now: Date) => (runId: string) =>
  reserveSandboxSeconds(t.db, { kind: "agent", changeId, id: `sbxres_${runId}` }, config, now);

const snapshot = async () => ({
  outbox: await t.db.outboxRow.count(),
  queue: await t.db.queueMessage.count(),
  tasks: await t.db.task.findMany({ orderBy: { id: "asc" } }),
});

describe("Tasks the Sandbox budget blocked", () => {
  it("resume when an admin raises the budget: only those, once, and not in a cancelled Change", async () => {
    const ACME = "ten_resume_acme";
    const OTHER = "ten_resume_other";
    const now = new Date("2026-06-10T09:00:00Z");
    await seedProjects(t.db, ["proj_resume_acme"], ACME);
    await seedProjects(t.db, ["proj_resume_other"], OTHER);
    for (const c of ["chg_wishlist", "chg_banner", "chg_dropped"]) await seedChange(t.db, "proj_resume_acme", c);
    await seedChange(t.db, "proj_resume_other", "chg_other");
    await t.db.change.update({ where: { id: "chg_wishlist" }, data: { landWhenReady: true, landingSince: now } });
    await used(ACME, "2026-06", 18_000);
    // The other tenant's own budget is smaller than one agent run: it has no room in any month.
    await setSandboxBudget(t.db, { tenantId: OTHER, monthlySeconds: 100, userId: "usr_admin" }, at(now));

    const { taskId: wishlist, err } = await blockedBy("chg_wishlist", "api", byBudget("chg_wishlist", now), now);
    expect(err.message).toContain("this month's Sandbox budget is exhausted");
    expect(err.message).toContain(BUDGET_BLOCKED_TASK_RESUMES);
    expect(await t.db.task.findUniqueOrThrow({ where: { id: wishlist } })).toMatchObject({
      state: "blocked",
      blockedLimit: "sandbox_meter",
      blockedCause: "sandbox_monthly_seconds",
    });
    const blocked = await t.db.outboxRow.findFirstOrThrow({ where: { eventType: "task.blocked" } });
    expect((blocked.envelope as { payload: unknown }).payload).toMatchObject({
      limit: "sandbox_meter",
      cause: "sandbox_monthly_seconds",
    });
    // Blocked for other reasons: too many open workspaces, and a dead letter.
    for (let i = 0; i < 4; i++)
      await admitSandbox(t.db, { changeId: "chg_banner", projectId: "proj_resume_acme" }, config);
    const { taskId: workspaces } = await blockedBy(
      "chg_banner",
      "page",
      () => admitSandbox(t.db, { changeId: "chg_banner", projectId: "proj_resume_acme" }, config),
      now,
    );
    expect((await t.db.task.findUniqueOrThrow({ where: { id: workspaces } })).blockedCause).toBe(
      "sandbox_open_workspaces",
    );
    await t.db.task.create({
      data: {
        id: "task_dead",
        changeId: "chg_banner",
        key: "dead",
        title: "dead",
        state: "blocked",
        blockedLimit: "dead_letter",
      },
    });
    // Blocked by the budget, then its Change was cancelled.
    const { taskId: dropped } = await blockedBy("chg_dropped", "x", byBudget("chg_dropped", now), now);
    await cancelChange(
      t.db,
      { tenantId: ACME, changeId: "chg_dropped", actorId: "usr_1", reason: "not needed" },
      at(now),
    );
    const { taskId: other } = await blockedBy("chg_other", "y", byBudget("chg_other", now), now);

    // While the budget has no room, nothing resumes and nothing is written.
    const before = await snapshot();
    expect(await resumeBudgetBlockedTasks(t.db, ACME, at(now))).toEqual({
      resumed: [],
      waiting: 1,
      remainingSeconds: 0,
    });
    expect(await snapshot()).toEqual(before);

    const raised = await setSandboxBudget(
      t.db,
      { tenantId: ACME, monthlySeconds: 36_000, userId: "usr_admin" },
      at(now),
    );
    expect(raised).toMatchObject({ changed: true, belowUsage: false, resumedTasks: 1 });
    expect(raised.note).toContain("1 Task the budget had blocked resumed.");
    expect(await t.db.task.findUniqueOrThrow({ where: { id: wishlist } })).toMatchObject({
      state: "pending",
      attempt: 2,
      dispatched: false,
      blockedLimit: null,
      blockedCause: null,
    });
    const retried = await t.db.outboxRow.findMany({ where: { eventType: "task.retried" } });
    expect(retried.map((r) => r.envelope)).toMatchObject([
      {
        taskId: wishlist,
        actor: { kind: "system", id: "sandbox-budget" },
        payload: { key: "api", attempt: 2, previousState: "blocked" },
      },
    ]);
    expect(await t.db.queueMessage.count({ where: { commandId: `cmd_retry_${wishlist}_a2` } })).toBe(1);
    // The others are as they were.
    for (const [id, limit] of [
      [workspaces, "sandbox_meter"],
      ["task_dead", "dead_letter"],
      [dropped, "sandbox_meter"],
      [other, "sandbox_meter"],
    ]) {
      expect(await t.db.task.findUniqueOrThrow({ where: { id } })).toMatchObject({
        state: "blocked",
        blockedLimit: limit,
      });
    }
    // The Change still lands when ready: the resumed Task is dispatched under its attempt's own wake.
    expect(await t.db.change.findUniqueOrThrow({ where: { id: "chg_wishlist" } })).toMatchObject({
      status: "open",
      landWhenReady: true,
    });
    await withTransaction(t.db, (ctx) => dispatchChange(ctx, "chg_wishlist", at(now), null));
    expect((await t.db.task.findUniqueOrThrow({ where: { id: wishlist } })).state).toBe("ready");
    expect(await t.db.queueMessage.count({ where: { commandId: `cmd_${wishlist}_ready_a2` } })).toBe(1);

    // Again, directly and by saving the same budget: nothing more.
    const after = await snapshot();
    expect((await resumeBudgetBlockedTasks(t.db, ACME, at(now))).resumed).toEqual([]);
    const same = await setSandboxBudget(t.db, { tenantId: ACME, monthlySeconds: 36_000, userId: "usr_admin" }, at(now));
    expect(same).toMatchObject({ changed: false, resumedTasks: 0 });
    expect(await snapshot()).toEqual(after);
  });

  it("resume when the month turns, on the maintenance step, once the new month has room", async () => {
    const MONTH = "ten_resume_month";
    const july = new Date("2026-07-14T12:00:00Z");
    await seedProjects(t.db, ["proj_resume_month"], MONTH);
    await seedChange(t.db, "proj_resume_month", "chg_month");
    await used(MONTH, "2026-07", 18_000);
    const a = await blockedBy("chg_month", "a", byBudget("chg_month", july), july);
    const b = await blockedBy("chg_month", "b", byBudget("chg_month", july), july);
    expect(await tenantsWithBudgetBlockedTasks(t.db)).toContain(MONTH);

    // The last minute of July: still no room, nothing resumes.
    const lastMinute = at(new Date("2026-07-31T23:59:00Z"));
    const before = await snapshot();
    expect((await resumeBudgetBlockedTasksEverywhere(t.db, lastMinute)).resumed).toBe(0);
    expect(await snapshot()).toEqual(before);

    // August's meter starts at 0: the maintenance tick resumes both, and only once.
    const tick = at(new Date("2026-08-01T04:17:00Z"));
    expect(await resumeBudgetBlockedTasksEverywhere(t.db, tick)).toMatchObject({ resumed: 2, failed: [] });
    for (const { taskId } of [a, b]) {
      expect(await t.db.task.findUniqueOrThrow({ where: { id: taskId } })).toMatchObject({
        state: "pending",
        attempt: 2,
      });
      expect(await t.db.queueMessage.count({ where: { commandId: `cmd_retry_${taskId}_a2` } })).toBe(1);
    }
    expect(await tenantsWithBudgetBlockedTasks(t.db)).not.toContain(MONTH);
    const after = await snapshot();
    expect((await resumeBudgetBlockedTasksEverywhere(t.db, tick)).resumed).toBe(0);
    expect(await snapshot()).toEqual(after);
  });
});
