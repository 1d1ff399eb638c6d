import { streamIndex } from "@rhumbatron/core";
import { analyticsSubscription } from "@rhumbatron/db";
import { testEvent, useTestDatabase } from "@rhumbatron/db/testing";
import { consumeOnce, postgresStreamSink, withTransaction } from "@rhumbatron/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import { ACME, emailFor, LONER_EMAIL, OTHER, OUTSIDER_EMAIL, recordingDb, seedTenants } from "../testing/fixtures.ts";
import { testServices } from "../testing/services.ts";
import { createContext } from "../trpc.ts";
import { createCaller } from "./_app.ts";

const t = useTestDatabase();
const shop = "proj_00000000-0000-4000-8000-00000000a001";
const blog = "proj_00000000-0000-4000-8000-00000000a002";
const secret = "proj_00000000-0000-4000-8000-00000000b001";
const NOW = new Date("2026-03-10T14:25:00Z");

function callerAt(email: string, db = t.db) {
  const services = { ...testServices(), now: () => NOW };
  return createCaller(createContext({ db, headers: new Headers(), localUserEmail: email, services }));
}

beforeAll(async () => {
  await seedTenants(t.db);
  const dataset = testServices().config.eventRouter.metricsDataset;
  let n = 0;
  const point = (name: string, tenantId: string, projectId: string, occurredAt: string, ds = dataset) => ({
    dataset: ds,
    name,
    eventId: `evt_${n++}`,
    tenantId,
    projectId,
    value: 1,
    occurredAt: new Date(occurredAt),
  });
  await t.db.metricPoint.createMany({
    data: [
      point("task_completed", ACME.tenantId, shop, "2026-03-10T13:05:00Z"),
      point("task_completed", ACME.tenantId, shop, "2026-03-10T13:55:00Z"),
      point("task_completed", ACME.tenantId, blog, "2026-03-10T14:01:00Z"),
      point("task_failed", ACME.tenantId, shop, "2026-03-09T08:00:00Z"),
      point("change_created", ACME.tenantId, shop, "2026-02-01T00:00:00Z"), // outside 7d, inside 90d
      point("task_completed", OTHER.tenantId, secret, "2026-03-10T13:10:00Z"),
      point("task_completed", ACME.tenantId, shop, "2026-03-10T13:30:00Z", "rhumbatron_event_metrics_prod"),
    ],
  });
});

describe("metrics.series", () => {
  it("sums the tenant's points per hour in SQL over the chosen range", async () => {
    const s = await callerAt(emailFor("viewer")).metrics.series({
      tenantId: ACME.tenantId,
      range: "24h",
      bucket: "hour",
    });
    expect(s).toMatchObject({
      range: "24h",
      bucket: "hour",
      buckets: 24,
      from: new Date("2026-03-09T15:00:00Z"),
      to: new Date("2026-03-10T15:00:00Z"),
    });
    expect(s.points).toEqual([
      { bucket: new Date("2026-03-10T13:00:00Z"), name: "task_completed", value: 2 },
      { bucket: new Date("2026-03-10T14:00:00Z"), name: "task_completed", value: 1 },
    ]);
    expect(s.names).toEqual(expect.arrayContaining(["change_created", "agent_false_wakeup", "promotion_completed"]));
  });

  it("buckets per day, filters by project, and reaches back as far as the range", async () => {
    const viewer = callerAt(emailFor("viewer"));
    const week = await viewer.metrics.series({ tenantId: ACME.tenantId, range: "7d", bucket: "day" });
    expect(week.points).toEqual([
      { bucket: new Date("2026-03-09T00:00:00Z"), name: "task_failed", value: 1 },
      { bucket: new Date("2026-03-10T00:00:00Z"), name: "task_completed", value: 3 },
    ]);
    const blogOnly = await viewer.metrics.series({
      tenantId: ACME.tenantId,
      range: "7d",
      bucket: "day",
      projectId: blog,
    });
    expect(blogOnly.points).toEqual([{ bucket: new Date("2026-03-10T00:00:00Z"), name: "task_completed", value: 1 }]);
    const quarter = await viewer.metrics.series({ tenantId: ACME.tenantId, range: "90d", bucket: "day" });
    expect(quarter.points.map((p) => p.name)).toContain("change_created");
  });

  it("refuses hourly buckets over 90 days before reading anything", async () => {
    const rec = recordingDb(t.db);
    await expect(
      callerAt(emailFor("viewer"), rec.db).metrics.series({ tenantId: ACME.tenantId, range: "90d", bucket: "hour" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(rec.touched).not.toContain("$queryRaw");
  });

  it("shows another tenant only its own points, and refuses callers outside the tenant without reading", async () => {
    const other = await callerAt(OUTSIDER_EMAIL).metrics.series({
      tenantId: OTHER.tenantId,
      range: "24h",
      bucket: "hour",
    });
    expect(other.points).toEqual([{ bucket: new Date("2026-03-10T13:00:00Z"), name: "task_completed", value: 1 }]);
    for (const email of [OUTSIDER_EMAIL, LONER_EMAIL]) {
      const rec = recordingDb(t.db);
      await expect(callerAt(email, rec.db).metrics.series({ tenantId: ACME.tenantId })).rejects.toMatchObject({
        code: "FORBIDDEN",
      });
      expect(rec.touched).not.toContain("$queryRaw");
    }
  });
});

describe("metrics.lag", () => {
  const config = testServices().config;
  const secondsBefore = (s: number) => new Date(NOW.getTime() - s * 1000);

  /** `n` Events of one project appended to its stream at `publishedAt`, as the publisher does. */
  async function published(projectId: string, tenantId: string, n: number, publishedAt: Date) {
    const records = Array.from({ length: n }, (_, i) => {
      const event = testEvent("task.ready", {
        projectId,
        tenantId,
        taskId: `task_lag_${publishedAt.getTime()}_${i}`,
        payload: { key: `t${i}` },
        at: new Date("2025-01-01T00:00:00Z"),
      });
      return {
        eventId: event.eventId,
        projectId,
        eventType: event.eventType,
        envelope: JSON.parse(JSON.stringify(event)),
      };
    });
    await withTransaction(t.db, ({ tx }) =>
      postgresStreamSink.append(tx, streamIndex(projectId, config.streams.count), records, publishedAt),
    );
  }

  const project = (projectId: string) =>
    consumeOnce(t.db, analyticsSubscription(config), streamIndex(projectId, config.streams.count), {
      config,
      now: () => NOW,
      owner: "metrics-test",
    });

  it("says how many of the tenant's Events wait for the analytics projector and how long, until they are projected", async () => {
    const viewer = callerAt(emailFor("viewer"));
    expect(await viewer.metrics.lag({ tenantId: ACME.tenantId })).toEqual({
      upToDate: true,
      waiting: 0,
      oldestWaitingSince: null,
      behindSeconds: 0,
    });
    await published(shop, ACME.tenantId, 3, secondsBefore(90));
    await published(blog, ACME.tenantId, 2, secondsBefore(30));
    await published(secret, OTHER.tenantId, 1, secondsBefore(600));

    expect(await viewer.metrics.lag({ tenantId: ACME.tenantId })).toEqual({
      upToDate: false,
      waiting: 5,
      oldestWaitingSince: secondsBefore(90),
      behindSeconds: 90,
    });
    // Another tenant's backlog is its own: neither counted here nor shown to it as Acme's.
    expect(await callerAt(OUTSIDER_EMAIL).metrics.lag({ tenantId: OTHER.tenantId })).toMatchObject({
      waiting: 1,
      behindSeconds: 600,
    });

    expect(await project(shop)).toMatchObject({ outcome: "ack", applied: 3 });
    expect(await viewer.metrics.lag({ tenantId: ACME.tenantId })).toMatchObject({ waiting: 2, behindSeconds: 30 });
    expect(await project(blog)).toMatchObject({ outcome: "ack", applied: 2 });
    expect(await viewer.metrics.lag({ tenantId: ACME.tenantId })).toMatchObject({ upToDate: true, waiting: 0 });
    expect(await callerAt(OUTSIDER_EMAIL).metrics.lag({ tenantId: OTHER.tenantId })).toMatchObject({ waiting: 1 });
  });
});

describe("metrics.landing, metrics.checks and metrics.sandbox", () => {
  const at = (iso: string) => new Date(`2026-03-${iso}Z`);

  /** A Change of `projectId` promoted as generation 1 at `landedAt`, its one check failed then passed. */
  async function landed(projectId: string, id: string, createdAt: string, landedAt: string, tenantId: string) {
    await t.db.change.create({
      data: { id, projectId, title: id, riskTier: "low", clientRequestId: id, createdAt: at(createdAt) },
    });
    await t.db.candidate.create({
      data: {
        id: `cand_${id}`,
        projectId,
        changeId: id,
        compositionKey: id,
        baseGeneration: 0,
        baseCommit: "c0",
        composedTree: `tree_${id}`,
        status: "promoted",
      },
    });
    await t.db.canonicalGeneration.create({
      data: {
        projectId,
        generation: 1,
        commit: `c_${id}`,
        tree: `tree_${id}`,
        candidateId: `cand_${id}`,
        createdAt: at(landedAt),
      },
    });
    for (const [n, status] of [
      [1, "fail"],
      [2, "pass"],
    ] as const) {
      await t.db.evidence.create({
        data: {
          id: `evd_${id}_${n}`,
          candidateId: `cand_${id}`,
          checkId: "unit",
          kind: "command",
          status,
          coverage: "checked_supported",
          durationMs: n * 1000,
          timeoutSeconds: 600,
          completedAt: at(landedAt),
        },
      });
    }
    await t.db.sandboxCharge.create({
      data: {
        reservationId: `res_${id}`,
        tenantId,
        env: testServices().config.env,
        window: "2026-03",
        kind: "agent",
        projectId,
        reservedSeconds: 300,
        billing: "measured",
        wallSeconds: 90,
        chargedSeconds: 90,
        reservedAt: at(createdAt),
        settledAt: at(createdAt),
      },
    });
  }

  beforeAll(async () => {
    await landed(shop, "chg_landed", "10T10:00:00", "10T10:30:00", ACME.tenantId);
    await landed(secret, "chg_secret", "10T11:00:00", "10T11:00:07", OTHER.tenantId);
  });

  it("reads the tenant's landing times, checks and Sandbox seconds over the window ending at the injected now", async () => {
    const viewer = callerAt(emailFor("viewer"));
    const input = { tenantId: ACME.tenantId, range: "24h", bucket: "hour" } as const;
    const window = { range: "24h", bucket: "hour", from: at("09T15:00:00"), to: at("10T15:00:00") };

    const landing = await viewer.metrics.landing(input);
    expect(landing).toMatchObject({ ...window, now: NOW });
    expect(landing.requestToLanded).toEqual({ landed: 1, p50Seconds: 1800, p90Seconds: 1800 });
    expect(landing.buckets).toEqual([{ bucket: at("10T10:00:00"), landed: 1, p50Seconds: 1800, p90Seconds: 1800 }]);
    expect(landing.depth.steps.at(-1)).toEqual({ t: NOW.getTime(), depth: 0 });

    const checks = await viewer.metrics.checks(input);
    expect(checks).toMatchObject(window);
    expect(checks.checks).toEqual([
      expect.objectContaining({ checkId: "unit", runs: 2, trees: 1, failedTrees: 1, flakyTrees: 0, flakeRate: 0 }),
    ]);

    const sandbox = await viewer.metrics.sandbox(input);
    expect(sandbox).toMatchObject(window);
    expect(sandbox.totals).toEqual([{ kind: "agent", seconds: 90, runs: 1 }]);
    // A day later the same rows are outside the last 24 hours.
    const later = createCaller(
      createContext({
        db: t.db,
        headers: new Headers(),
        localUserEmail: emailFor("viewer"),
        services: { ...testServices(), now: () => at("11T16:00:00") },
      }),
    );
    expect((await later.metrics.landing(input)).requestToLanded.landed).toBe(0);
  });

  it("shows another tenant only its own numbers, and refuses callers outside the tenant without reading", async () => {
    const other = callerAt(OUTSIDER_EMAIL);
    const input = { tenantId: OTHER.tenantId, range: "24h", bucket: "hour" } as const;
    expect((await other.metrics.landing(input)).requestToLanded).toEqual({ landed: 1, p50Seconds: 7, p90Seconds: 7 });
    expect((await other.metrics.sandbox(input)).totals).toEqual([{ kind: "agent", seconds: 90, runs: 1 }]);
    expect((await other.metrics.checks(input)).checks.map((c) => c.checkId)).toEqual(["unit"]);
    for (const email of [OUTSIDER_EMAIL, LONER_EMAIL]) {
      for (const procedure of ["landing", "checks", "sandbox"] as const) {
        const rec = recordingDb(t.db);
        await expect(callerAt(email, rec.db).metrics[procedure]({ tenantId: ACME.tenantId })).rejects.toMatchObject({
          code: "FORBIDDEN",
        });
        expect(rec.touched).not.toContain("$queryRaw");
      }
    }
  });
});
