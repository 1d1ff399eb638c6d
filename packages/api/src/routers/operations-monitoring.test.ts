import { streamIndex } from "@rhumbatron/core";
import { CLASSIFIER_COUNTER, SANDBOX_COUNTERS, sandboxMeterScope } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { ACME, emailFor, LONER_EMAIL, OTHER, OUTSIDER_EMAIL, recordingDb, seedTenants } from "../testing/fixtures.ts";
import { testServices } from "../testing/services.ts";
import { createContext } from "../trpc.ts";
import { createCaller } from "./_app.ts";

const t = useTestDatabase();
const shop = "proj_00000000-0000-4000-8000-00000000a001";
const NOW = new Date("2026-03-10T14:25:00Z");
const config = testServices().config;
const shopStream = streamIndex(shop, config.streams.count);

function callerAt(email: string, db = t.db) {
  const services = { ...testServices(), now: () => NOW };
  return createCaller(createContext({ db, headers: new Headers(), localUserEmail: email, services }));
}

beforeAll(async () => {
  await seedTenants(t.db);
  await t.db.streamHead.create({ data: { streamIndex: shopStream, lastOffset: 42n } });
  await t.db.streamCursor.createMany({
    data: [
      { subscription: "project-view-projector", streamIndex: shopStream, committedOffset: 40n },
      { subscription: "causal-router", streamIndex: shopStream, committedOffset: 42n },
    ],
  });
  const env = config.env;
  // The Sandbox meter is per tenant; the classifier's daily calls are the environment's.
  const acme = sandboxMeterScope(env, ACME.tenantId);
  await t.db.usageCounter.createMany({
    data: [
      { counter: SANDBOX_COUNTERS.usedSeconds, scopeId: acme, window: "2026-03", count: 4_500 },
      { counter: SANDBOX_COUNTERS.reservedSeconds, scopeId: acme, window: "2026-03", count: 900 },
      { counter: SANDBOX_COUNTERS.usedSeconds, scopeId: acme, window: "2026-02", count: 17_000 },
      {
        counter: SANDBOX_COUNTERS.usedSeconds,
        scopeId: sandboxMeterScope(env, OTHER.tenantId),
        window: "2026-03",
        count: 9,
      },
      { counter: CLASSIFIER_COUNTER, scopeId: env, window: "2026-03-10", count: 37 },
      { counter: CLASSIFIER_COUNTER, scopeId: env, window: "2026-03-09", count: 200 },
    ],
  });
});

describe("operations.streamLag", () => {
  it("gives an operator every stream's head and each subscription's lag, naming the tenant's projects", async () => {
    const lag = await callerAt(emailFor("operator")).operations.streamLag({ tenantId: ACME.tenantId });
    expect(lag).toHaveLength(config.streams.count);
    const s = lag[shopStream];
    expect(s).toMatchObject({
      streamIndex: shopStream,
      headOffset: 42,
      maxLag: 2,
      projects: expect.arrayContaining(["shop"]),
    });
    expect(s?.subscriptions.map((x) => [x.subscription, x.committedOffset, x.lag])).toEqual([
      ["causal-router", 42, 0],
      ["project-view-projector", 40, 2],
    ]);
    const quiet = lag.find((x) => x.streamIndex !== shopStream && x.subscriptions.length === 0);
    expect(quiet).toMatchObject({ headOffset: 0, maxLag: 0 });
    expect(lag.flatMap((x) => x.projects)).not.toContain("secret");
  });
});

describe("operations.meters", () => {
  it("reads the tenant's Sandbox meter this month and today's classifier calls against their caps", async () => {
    expect(await callerAt(emailFor("admin")).operations.meters({ tenantId: ACME.tenantId })).toEqual({
      sandbox: {
        env: config.env,
        window: "2026-03",
        usedSeconds: 4_500,
        reservedSeconds: 900,
        capSeconds: config.sandbox.monthlySeconds,
      },
      classifier: { env: config.env, day: "2026-03-10", calls: 37, cap: config.causal.classifierDailyCallCap },
    });
    expect(config.sandbox.monthlySeconds).toBe(18_000);
    expect(config.causal.classifierDailyCallCap).toBe(200);
    const other = await callerAt(OUTSIDER_EMAIL).operations.meters({ tenantId: OTHER.tenantId });
    expect(other.sandbox).toMatchObject({ usedSeconds: 9, reservedSeconds: 0 });
    expect(other.classifier.calls).toBe(37);
  });
});

describe("operations monitoring roles", () => {
  it("is FORBIDDEN below operator and outside the tenant, reading nothing and writing nothing", async () => {
    const before = await t.db.usageCounter.count();
    for (const email of [emailFor("viewer"), emailFor("member"), emailFor("approver"), OUTSIDER_EMAIL, LONER_EMAIL]) {
      const rec = recordingDb(t.db);
      const ops = callerAt(email, rec.db).operations;
      await expect(ops.streamLag({ tenantId: ACME.tenantId }), email).rejects.toMatchObject({ code: "FORBIDDEN" });
      await expect(ops.meters({ tenantId: ACME.tenantId }), email).rejects.toMatchObject({ code: "FORBIDDEN" });
      for (const model of ["streamHead", "streamCursor", "usageCounter", "project"]) {
        expect(rec.touched, `${email} ${model}`).not.toContain(model);
      }
    }
    expect(await t.db.usageCounter.count()).toBe(before);
    // The other tenant's admin sees the same environment-wide numbers for its own tenant.
    const theirs = await callerAt(OUTSIDER_EMAIL).operations.streamLag({ tenantId: OTHER.tenantId });
    expect(theirs.flatMap((x) => x.projects)).toEqual(["secret"]);
  });
});
