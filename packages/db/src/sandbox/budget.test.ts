import { DomainError, loadConfig } from "@rhumbatron/core";
import { pgNotifyNudger } from "@rhumbatron/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../testing/index.ts";
import { sandboxMeter, setSandboxBudget } from "./budget.ts";
import { reserveSandboxSeconds, SANDBOX_COUNTERS, sandboxMeterScope, settleSandbox } from "./meter.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
const ACME = "ten_acme";
const OTHER = "ten_other";
const SHOP = "proj_budget_shop";
/** setSandboxBudget's dependencies with the clock stopped at `now`. */
const at = (now: Date) => ({ config, nudger: pgNotifyNudger, now: () => now });

async function refusal(p: Promise<unknown>): Promise<DomainError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

beforeAll(async () => {
  await t.db.tenant.createMany({
    data: [
      { id: ACME, slug: "acme", name: "Acme" },
      { id: OTHER, slug: "other", name: "Other" },
    ],
  });
  await t.db.user.create({ data: { id: "usr_admin", email: "admin@acme.test", name: "Acme admin" } });
  await t.db.project.create({ data: { id: SHOP, tenantId: ACME, name: "shop", status: "active" } });
  for (const id of ["chg_wishlist", "chg_banner"]) {
    await t.db.change.create({
      data: { id, projectId: SHOP, title: `Change ${id}`, riskTier: "low", clientRequestId: id },
    });
  }
  await t.db.task.create({ data: { id: "task_w", changeId: "chg_wishlist", key: "a", title: "a" } });
  await t.db.agentRun.create({
    data: {
      id: "run_w1",
      taskId: "task_w",
      changeId: "chg_wishlist",
      agentId: "agt",
      wakeCommandId: "cmd_w1",
      reason: "dispatch",
    },
  });
  await t.db.candidate.create({
    data: {
      id: "cand_banner",
      projectId: SHOP,
      changeId: "chg_banner",
      compositionKey: "k_banner",
      baseGeneration: 0,
      baseCommit: "c0",
    },
  });
});

describe("the Sandbox meter with measured billing", () => {
  // About 460 transactions one after another: a generous outer limit, since the machine may be shared.
  it("lets 200 short agent runs in a row through the default budget; the idle tail stopped it after 30", async () => {
    const now = new Date("2026-01-15T10:00:00Z");
    for (let i = 0; i < 200; i++) {
      const r = await reserveSandboxSeconds(t.db, { kind: "agent", tenantId: ACME }, config, now);
      expect(r.seconds).toBe(300); // the reservation keeps its size; it is released at settle
      expect(await settleSandbox(t.db, r, { wallSeconds: 2.4, billing: "measured" }, config)).toEqual({
        settled: true,
        usedSeconds: 3,
      });
    }
    const meter = await sandboxMeter(t.db, ACME, config, now);
    expect(meter).toMatchObject({
      usedSeconds: 600,
      reservedSeconds: 0,
      remainingSeconds: 17_400,
      budget: { seconds: 18_000, source: "default" },
      byKind: [{ kind: "agent", seconds: 600, runs: 200 }],
    });
    await reserveSandboxSeconds(t.db, { kind: "candidate", tenantId: ACME }, config, now);

    // The same runs charged as a container (wall time + 600 s idle tail): the 31st is refused.
    let admitted = 0;
    for (let i = 0; i < 200; i++) {
      const r = await reserveSandboxSeconds(t.db, { kind: "agent", tenantId: OTHER }, config, now).catch(
        (e: unknown) => e,
      );
      if (r instanceof DomainError) break;
      admitted++;
      await settleSandbox(
        t.db,
        r as Awaited<ReturnType<typeof reserveSandboxSeconds>>,
        { wallSeconds: 3, billing: "container" },
        config,
      );
    }
    expect(admitted).toBe(30);
  }, 300_000);
});

describe("the tenant's budget", () => {
  it("refuses once the budget is exhausted, says how to raise it, and lets the same reservation through once raised", async () => {
    const now = new Date("2026-02-03T08:00:00Z");
    const scope = sandboxMeterScope(config.env, ACME);
    await t.db.usageCounter.create({
      data: { counter: SANDBOX_COUNTERS.usedSeconds, scopeId: scope, window: "2026-02", count: 17_900 },
    });
    const input = { kind: "agent" as const, changeId: "chg_wishlist", id: "sbxres_run_w1" };
    const err = await refusal(reserveSandboxSeconds(t.db, input, config, now));
    expect(err.code).toBe("PRECONDITION_FAILED");
    expect(err.message).toContain(`tenant ${ACME}: sandbox monthly meter: 17900 s used + 0 s reserved + 300 s (agent)`);
    expect(err.message).toContain("this month's Sandbox budget is exhausted");
    expect(err.message).toContain("/operations");
    expect(err.message).toContain("rhumbatron sandbox budget --set <seconds>");
    expect(err.message).toContain("RHUMBATRON_SANDBOX_MONTHLY_SECONDS");
    expect(await t.db.sandboxCharge.count({ where: { reservationId: input.id } })).toBe(0);
    // Another tenant's meter is its own.
    await reserveSandboxSeconds(t.db, { kind: "agent", tenantId: OTHER }, config, now);

    const raised = await setSandboxBudget(
      t.db,
      { tenantId: ACME, monthlySeconds: 36_000, userId: "usr_admin" },
      at(now),
    );
    expect(raised).toMatchObject({ changed: true, previousSeconds: null, belowUsage: false });
    expect(raised.meter.budget).toMatchObject({
      seconds: 36_000,
      source: "tenant",
      updatedBy: { userId: "usr_admin", name: "Acme admin", email: "admin@acme.test" },
    });
    const r = await reserveSandboxSeconds(t.db, input, config, now);
    expect(r).toMatchObject({ id: "sbxres_run_w1", seconds: 300, window: "2026-02" });
    // The reservation is recorded for the tenant, the project and the Change, all found from the Change.
    expect(await t.db.sandboxCharge.findUniqueOrThrow({ where: { reservationId: r.id } })).toMatchObject({
      tenantId: ACME,
      projectId: SHOP,
      changeId: "chg_wishlist",
      kind: "agent",
      reservedSeconds: 300,
      settledAt: null,
    });
    expect((await sandboxMeter(t.db, ACME, config, now)).openReservations).toBe(1);
    await settleSandbox(t.db, r, { wallSeconds: 41 }, config);

    // A Candidate's reservation finds its tenant from its owner's ID alone (as the workflow reserves).
    const cand = await reserveSandboxSeconds(t.db, { kind: "candidate", id: "sbxres_cand_banner" }, config, now);
    await settleSandbox(t.db, cand, { wallSeconds: 120 }, config);
    const meter = await sandboxMeter(t.db, ACME, config, now);
    expect(meter).toMatchObject({ usedSeconds: 17_900 + 41 + 120, reservedSeconds: 0, openReservations: 0 });
    expect(meter.byKind).toEqual([
      { kind: "agent", seconds: 41, runs: 1 },
      { kind: "candidate", seconds: 120, runs: 1 },
    ]);
    expect(meter.topChanges).toEqual([
      {
        changeId: "chg_banner",
        title: "Change chg_banner",
        projectId: SHOP,
        projectName: "shop",
        seconds: 120,
        runs: 1,
      },
      {
        changeId: "chg_wishlist",
        title: "Change chg_wishlist",
        projectId: SHOP,
        projectName: "shop",
        seconds: 41,
        runs: 1,
      },
    ]);
  });

  it("takes the deployment's setting when the tenant has none, and the tenant's own before it", async () => {
    const now = new Date("2026-03-01T00:00:00Z");
    const deployment = loadConfig("dev", { sandbox: { deploymentMonthlySeconds: 600 } });
    await reserveSandboxSeconds(t.db, { kind: "agent", tenantId: OTHER }, deployment, now);
    await reserveSandboxSeconds(t.db, { kind: "agent", tenantId: OTHER }, deployment, now);
    const err = await refusal(reserveSandboxSeconds(t.db, { kind: "agent", tenantId: OTHER }, deployment, now));
    expect(err.message).toContain("would pass 600 s (the deployment's RHUMBATRON_SANDBOX_MONTHLY_SECONDS)");
    expect((await sandboxMeter(t.db, OTHER, deployment, now)).budget).toMatchObject({
      seconds: 600,
      source: "setting",
    });
    // Acme set its own budget above: the deployment's setting does not apply to it.
    expect((await sandboxMeter(t.db, ACME, deployment, now)).budget).toMatchObject({
      seconds: 36_000,
      source: "tenant",
    });
    await reserveSandboxSeconds(t.db, { kind: "candidate", tenantId: ACME }, deployment, now);
  });

  it("allows a budget below what is used, says so, and writes nothing for the same value again", async () => {
    const now = new Date("2026-02-20T00:00:00Z");
    const low = await setSandboxBudget(t.db, { tenantId: ACME, monthlySeconds: 1_000, userId: "usr_admin" }, at(now));
    expect(low).toMatchObject({ changed: true, previousSeconds: 36_000, belowUsage: true });
    expect(low.note).toMatch(/below what 2026-02 already holds \(18061 s used \+ 0 s reserved\)/);
    const later = new Date("2026-02-21T00:00:00Z");
    const same = await setSandboxBudget(
      t.db,
      { tenantId: ACME, monthlySeconds: 1_000, userId: "usr_other" },
      at(later),
    );
    expect(same).toMatchObject({ changed: false, previousSeconds: 1_000 });
    expect(await t.db.tenantSandboxBudget.findUniqueOrThrow({ where: { tenantId: ACME } })).toMatchObject({
      monthlySeconds: 1_000,
      updatedBy: "usr_admin",
      updatedAt: now,
    });
    for (const bad of [0, -1, 2.5, 26_784_001]) {
      const err = await refusal(
        setSandboxBudget(t.db, { tenantId: ACME, monthlySeconds: bad, userId: "usr_admin" }, at(now)),
      );
      expect(err.code).toBe("INVALID_INPUT");
    }
    expect((await t.db.tenantSandboxBudget.findUniqueOrThrow({ where: { tenantId: ACME } })).monthlySeconds).toBe(
      1_000,
    );
  });

  it("refuses a reservation that names no tenant, and settles one made before the meter was per tenant on the old meter", async () => {
    const now = new Date("2026-04-01T00:00:00Z");
    const err = await refusal(reserveSandboxSeconds(t.db, { kind: "agent" }, config, now));
    expect(err.code).toBe("INVALID_INPUT");
    // An environment-wide reservation left open across the upgrade: no charge row, counted under scope "dev".
    await t.db.usageCounter.createMany({
      data: [
        { counter: SANDBOX_COUNTERS.reservedSeconds, scopeId: "dev", window: "2026-04", count: 900 },
        { counter: SANDBOX_COUNTERS.reservation, scopeId: "sbxres_legacy", window: "2026-04", count: 900 },
      ],
    });
    const legacy = {
      id: "sbxres_legacy",
      kind: "candidate" as const,
      seconds: 900,
      window: "2026-04",
      env: "dev",
      changeId: null,
    };
    expect(await settleSandbox(t.db, legacy, { wallSeconds: 10 }, config)).toEqual({ settled: true, usedSeconds: 10 });
    const counters = await t.db.usageCounter.findMany({ where: { scopeId: "dev", window: "2026-04" } });
    expect(Object.fromEntries(counters.map((c) => [c.counter, c.count]))).toEqual({
      [SANDBOX_COUNTERS.reservedSeconds]: 0,
      [SANDBOX_COUNTERS.usedSeconds]: 10,
    });
  });
});
