import { reserveSandboxSeconds, SANDBOX_COUNTERS, sandboxMeterScope } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { ACME, emailFor, OTHER, OUTSIDER_EMAIL, rejection, seedTenants } from "../testing/fixtures.ts";
import { testServices } from "../testing/services.ts";
import { createContext } from "../trpc.ts";
import { createCaller } from "./_app.ts";

const t = useTestDatabase();
const NOW = new Date("2026-05-12T09:30:00Z");
const services = { ...testServices(), now: () => NOW };
const config = services.config;
const tenantId = ACME.tenantId;

function callerAt(email: string) {
  return createCaller(createContext({ db: t.db, headers: new Headers(), localUserEmail: email, services }));
}

beforeAll(async () => {
  await seedTenants(t.db);
  // Acme has used almost all of the default 18,000 s this month.
  await t.db.usageCounter.create({
    data: {
      counter: SANDBOX_COUNTERS.usedSeconds,
      scopeId: sandboxMeterScope(config.env, tenantId),
      window: "2026-05",
      count: 17_800,
    },
  });
});

describe("sandbox.meter", () => {
  it("shows anyone in the tenant this month's used, reserved and budget, and where the budget comes from", async () => {
    const meter = await callerAt(emailFor("viewer")).sandbox.meter({ tenantId });
    expect(meter).toMatchObject({
      tenantId,
      window: "2026-05",
      usedSeconds: 17_800,
      reservedSeconds: 0,
      remainingSeconds: 200,
      budget: { seconds: 18_000, source: "default", updatedAt: null, updatedBy: null },
      deploymentSeconds: null,
      defaultSeconds: 18_000,
      byKind: [],
      topChanges: [],
    });
    // Another tenant's meter is its own.
    const theirs = await callerAt(OUTSIDER_EMAIL).sandbox.meter({ tenantId: OTHER.tenantId });
    expect(theirs).toMatchObject({ usedSeconds: 0, remainingSeconds: 18_000 });
  });
});

describe("sandbox.setBudget", () => {
  it("is for admins only: an operator, an approver, a member or a viewer is FORBIDDEN and nothing is written", async () => {
    for (const role of ["operator", "approver", "member", "viewer"] as const) {
      const err = await rejection(callerAt(emailFor(role)).sandbox.setBudget({ tenantId, monthlySeconds: 72_000 }));
      expect(err.code, role).toBe("FORBIDDEN");
    }
    const outsider = await rejection(callerAt(OUTSIDER_EMAIL).sandbox.setBudget({ tenantId, monthlySeconds: 72_000 }));
    expect(outsider.code).toBe("FORBIDDEN");
    expect(await t.db.tenantSandboxBudget.count()).toBe(0);
  });

  it("refuses a value that is not a whole number of seconds between 1 and the maximum, writing nothing", async () => {
    const admin = callerAt(emailFor("admin"));
    for (const bad of [0, -60, 1.5, 26_784_001, "72000", null]) {
      const err = await rejection(admin.sandbox.setBudget({ tenantId, monthlySeconds: bad as number }));
      expect(err.code, String(bad)).toBe("BAD_REQUEST");
    }
    const tooBig = await rejection(admin.sandbox.setBudget({ tenantId, monthlySeconds: 26_784_001 }));
    expect(tooBig.message).toContain("must be at most 26784000 seconds");
    expect(await t.db.tenantSandboxBudget.count()).toBe(0);
  });

  it("lets an admin raise an exhausted budget, so the refused reservation goes through", async () => {
    const request = { kind: "agent" as const, tenantId };
    const refused = await reserveSandboxSeconds(t.db, request, config, NOW).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "PRECONDITION_FAILED" });
    expect((refused as Error).message).toContain("this month's Sandbox budget is exhausted");
    expect((refused as Error).message).toContain("/operations");

    const r = await callerAt(emailFor("admin")).sandbox.setBudget({ tenantId, monthlySeconds: 36_000 });
    expect(r).toMatchObject({ changed: true, previousSeconds: null, belowUsage: false });
    expect(r.meter.budget).toMatchObject({
      seconds: 36_000,
      source: "tenant",
      updatedAt: NOW,
      updatedBy: { userId: "usr_acme_admin", email: emailFor("admin") },
    });
    expect(r.note).toBe("2026-05: 18200 s of 36000 s left (17800 s used, 0 s reserved).");
    await expect(reserveSandboxSeconds(t.db, request, config, NOW)).resolves.toMatchObject({ seconds: 300 });
    expect((await callerAt(emailFor("operator")).operations.meters({ tenantId })).sandbox).toMatchObject({
      usedSeconds: 17_800,
      reservedSeconds: 300,
      capSeconds: 36_000,
    });
  });

  it("allows a budget below what the month already used, and says so", async () => {
    const r = await callerAt(emailFor("admin")).sandbox.setBudget({ tenantId, monthlySeconds: 10_000 });
    expect(r).toMatchObject({ changed: true, previousSeconds: 36_000, belowUsage: true });
    expect(r.note).toContain("below what 2026-05 already holds (17800 s used + 300 s reserved)");
    expect(r.note).toContain("every new Sandbox reservation is refused");
    const again = await callerAt(emailFor("admin")).sandbox.setBudget({ tenantId, monthlySeconds: 10_000 });
    expect(again.changed).toBe(false);
  });
});
