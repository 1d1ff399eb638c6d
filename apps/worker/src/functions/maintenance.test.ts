import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type RhumbatronConfig } from "@rhumbatron/core";
import { localFolderBlobStore, pruneWebhookDeliveries, SANDBOX_COUNTERS, sandboxMeterScope } from "@rhumbatron/db";
import { seedChange, seedProjects, useTestDatabase } from "@rhumbatron/db/testing";
import { pgNotifyNudger } from "@rhumbatron/runtime";
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

describe("webhook delivery pruning", () => {
  const tick = (config: RhumbatronConfig, at: string) =>
    maintenanceFunction(
      config,
      localFolderBlobStore(mkdtempSync(join(tmpdir(), "rhumbatron-blobs-"))),
      pgNotifyNudger,
    ).handler({
      db: t.db,
      config,
      logger: captureLogs().logger,
      now: () => new Date(at),
      key: "default",
      trigger: "cron",
      worker: testIdentity(),
    });

  /** A hook in a project of its own, and a delivery maker with `attempts` attempts each. */
  async function hook(id: string) {
    await seedProjects(t.db, [`proj_${id}`], "ten_prune");
    await t.db.webhook.create({
      data: {
        id,
        projectId: `proj_${id}`,
        url: "https://hooks.example.com/prune",
        eventTypes: ["approval.requested"],
        secret: `whsec_${id}`,
        secretPrefix: "whsec_",
        createdBy: "usr_prune",
      },
    });
    return async (deliveryId: string, status: string, createdAt: string, attempts = 1) => {
      await t.db.webhookDelivery.create({
        data: {
          id: deliveryId,
          webhookId: id,
          eventId: `evt_${deliveryId}`,
          eventType: "approval.requested",
          event: { eventId: `evt_${deliveryId}` },
          status,
          createdAt: new Date(createdAt),
        },
      });
      for (let attempt = 1; attempt <= attempts; attempt++) {
        await t.db.webhookAttempt.create({
          data: {
            deliveryId,
            attempt,
            outcome: status === "succeeded" && attempt === attempts ? "succeeded" : "failed",
            httpStatus: 500,
            durationMs: 5,
            attemptedAt: new Date(createdAt),
          },
        });
      }
    };
  }

  it("deletes finished deliveries older than the retention with their attempts; keeps pending, retrying and recent ones", async () => {
    const delivery = await hook("whk_prune");
    await delivery("whd_old_ok", "succeeded", "2026-09-01T00:00:00Z", 2);
    await delivery("whd_old_failed", "failed", "2026-09-01T00:00:00Z", 6);
    await delivery("whd_old_pending", "pending", "2026-09-01T00:00:00Z", 0);
    await delivery("whd_old_retrying", "retrying", "2026-09-01T00:00:00Z", 3);
    await delivery("whd_recent_ok", "succeeded", "2026-10-20T00:00:00Z");
    await delivery("whd_recent_failed", "failed", "2026-10-31T00:00:00Z", 6);
    const kept = ["whd_old_pending", "whd_old_retrying", "whd_recent_failed", "whd_recent_ok"];
    const remaining = async () =>
      (await t.db.webhookDelivery.findMany({ where: { webhookId: "whk_prune" }, orderBy: { id: "asc" } })).map(
        (d) => d.id,
      );

    // 90 days' retention: nothing finished is that old yet.
    const longer = loadConfig("dev", { webhooks: { deliveryRetentionDays: 90 } });
    expect(await tick(longer, "2026-11-01T04:17:00Z")).toMatchObject({ webhookDeliveriesPruned: 0 });
    expect(await remaining()).toHaveLength(6);

    // The default 30 days: the two finished in September go, with their attempts.
    expect(testConfig.webhooks.deliveryRetentionDays).toBe(30);
    expect(await tick(testConfig, "2026-11-01T04:17:00Z")).toMatchObject({ webhookDeliveriesPruned: 2 });
    expect(await remaining()).toEqual(kept);
    expect(await t.db.webhookAttempt.count({ where: { deliveryId: { in: ["whd_old_ok", "whd_old_failed"] } } })).toBe(
      0,
    );
    expect(await t.db.webhookAttempt.count({ where: { deliveryId: { in: kept } } })).toBe(3 + 1 + 6);
    expect(await tick(testConfig, "2026-11-01T04:17:00Z")).toMatchObject({ webhookDeliveriesPruned: 0 });

    // Pending and retrying ones stay however old they get.
    expect(await tick(testConfig, "2027-06-01T04:17:00Z")).toMatchObject({ webhookDeliveriesPruned: 2 });
    expect(await remaining()).toEqual(["whd_old_pending", "whd_old_retrying"]);
  });

  it("deletes in batches, at most so many per call; the next call takes the rest", async () => {
    const delivery = await hook("whk_prune_batches");
    for (let i = 0; i < 5; i++) await delivery(`whd_batch_${i}`, "succeeded", "2026-01-01T00:00:00Z");
    const before = new Date("2026-06-01T00:00:00Z");
    expect(await pruneWebhookDeliveries(t.db, { before, batchSize: 2, maxBatches: 2 })).toBe(4);
    expect(await t.db.webhookDelivery.count({ where: { webhookId: "whk_prune_batches" } })).toBe(1);
    expect(await pruneWebhookDeliveries(t.db, { before, batchSize: 2, maxBatches: 2 })).toBe(1);
    expect(await pruneWebhookDeliveries(t.db, { before, batchSize: 2, maxBatches: 2 })).toBe(0);
  });

  it("deletes sign-in attempts older than a day and keeps the recent ones, which still count", async () => {
    await t.db.signInAttempt.createMany({
      data: [
        { scope: "account", key: "old@acme.test", at: new Date("2026-10-30T04:00:00Z") },
        { scope: "address", key: "203.0.113.7", at: new Date("2026-10-31T04:16:00Z") },
        { scope: "account", key: "recent@acme.test", at: new Date("2026-11-01T04:10:00Z") },
      ],
    });
    expect(await tick(testConfig, "2026-11-01T04:17:00Z")).toMatchObject({ signInAttemptsPruned: 2 });
    expect((await t.db.signInAttempt.findMany()).map((a) => a.key)).toEqual(["recent@acme.test"]);
  });
});
