import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { localFolderBlobStore, pgNotifyNudger, SANDBOX_COUNTERS, sandboxMeterScope } from "@rhumbatron/db";
import { seedChange, seedProjects, useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { captureLogs, testConfig, testIdentity } from "../testing.ts";
import { maintenanceFunction } from "./maintenance.ts";

const t = useTestDatabase();

describe("the maintenance tick", () => {
  it("resumes the Tasks the Sandbox budget blocked once a new month gives the meter room", async () => {
    const blobs = localFolderBlobStore(mkdtempSync(join(tmpdir(), "rhumbatron-blobs-")));
    const fn = maintenanceFunction(testConfig, blobs, pgNotifyNudger);
    const run = (at: string) =>
      fn.handler({
        db: t.db,
        config: testConfig,
        logger: captureLogs().logger,
        now: () => new Date(at),
        key: "default",
        trigger: "cron",
        worker: testIdentity(),
      });
    await seedProjects(t.db, ["proj_tick"], "ten_tick");
    await seedChange(t.db, "proj_tick", "chg_tick");
    await t.db.usageCounter.create({
      data: {
        counter: SANDBOX_COUNTERS.usedSeconds,
        scopeId: sandboxMeterScope(testConfig.env, "ten_tick"),
        window: "2026-09",
        count: testConfig.sandbox.monthlySeconds,
      },
    });
    // As the Agent runner leaves a Task the monthly budget refused.
    await t.db.task.create({
      data: {
        id: "task_tick",
        changeId: "chg_tick",
        key: "a",
        title: "a",
        state: "blocked",
        blockedLimit: "sandbox_meter",
        blockedCause: "sandbox_monthly_seconds",
      },
    });

    expect(await run("2026-09-30T04:17:00Z")).toMatchObject({
      budgetBlockedTasks: { tenants: 1, resumed: 0, waiting: 1, failed: 0 },
    });
    expect((await t.db.task.findUniqueOrThrow({ where: { id: "task_tick" } })).state).toBe("blocked");

    expect(await run("2026-10-01T04:17:00Z")).toMatchObject({
      budgetBlockedTasks: { tenants: 1, resumed: 1, waiting: 0, failed: 0 },
    });
    expect(await t.db.task.findUniqueOrThrow({ where: { id: "task_tick" } })).toMatchObject({
      state: "pending",
      attempt: 2,
    });
    expect(await t.db.queueMessage.count({ where: { commandId: "cmd_retry_task_tick_a2" } })).toBe(1);
    expect(await run("2026-10-02T04:17:00Z")).toMatchObject({
      budgetBlockedTasks: { tenants: 0, resumed: 0, waiting: 0, failed: 0 },
    });
  });
});
