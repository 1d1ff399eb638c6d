import { DomainError, loadConfig } from "@rhumbatron/core";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../testing/index.ts";
import {
  admitSandbox,
  releaseSandboxAdmission,
  reserveSandboxSeconds,
  SANDBOX_COUNTERS,
  sandboxMeterScope,
  settleSandbox,
} from "./meter.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
/** The meter is per tenant: every reservation here counts on this tenant's (scope dev:ten_meter). */
const tenantId = "ten_meter";
const scope = sandboxMeterScope("dev", tenantId);

beforeAll(async () => {
  await t.db.tenant.create({ data: { id: tenantId, slug: "meter", name: "Meter" } });
});

async function counter(name: string, scopeId: string, window: string): Promise<number> {
  const row = await t.db.usageCounter.findUnique({
    where: { counter_scopeId_window: { counter: name, scopeId, window } },
  });
  return row?.count ?? 0;
}
const reserved = (window: string) => counter(SANDBOX_COUNTERS.reservedSeconds, scope, window);
const used = (window: string) => counter(SANDBOX_COUNTERS.usedSeconds, scope, window);

async function refusal(p: Promise<unknown>): Promise<DomainError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

describe("sandbox meter in usage_counters", () => {
  it("refuses the fifth open workspace of a Change, and admits again once one closes", async () => {
    const input = { changeId: "chg_five", projectId: "proj_five" };
    const admitted = await Promise.all([1, 2, 3, 4].map(() => admitSandbox(t.db, input, config)));
    const err = await refusal(admitSandbox(t.db, input, config));
    expect(err.code).toBe("PRECONDITION_FAILED");
    expect(err.message).toMatch(/open-workspace limit.*4 of 4/);
    expect(err.details).toMatchObject({ limit: "sandbox_open_workspaces", blockedLimit: "sandbox_meter" });
    // Another Change is not affected.
    await admitSandbox(t.db, { changeId: "chg_other", projectId: "proj_five" }, config);
    await releaseSandboxAdmission(t.db, admitted[0] as (typeof admitted)[0]);
    await admitSandbox(t.db, input, config);
    expect(await counter(SANDBOX_COUNTERS.openWorkspaces, "chg_five", "-")).toBe(4);
  });

  it("reserves up to the monthly budget exactly and refuses one reservation more, saying how to raise it", async () => {
    const now = new Date("2026-03-10T12:00:00Z");
    // 19 Candidate checks (17,100 s) + 3 agents (900 s) land exactly on 18,000 s.
    for (let i = 0; i < 19; i++) await reserveSandboxSeconds(t.db, { kind: "candidate", tenantId }, config, now);
    for (let i = 0; i < 3; i++) await reserveSandboxSeconds(t.db, { kind: "agent", tenantId }, config, now);
    expect(await reserved("2026-03")).toBe(18_000);
    const err = await refusal(reserveSandboxSeconds(t.db, { kind: "agent", tenantId }, config, now));
    expect(err.code).toBe("PRECONDITION_FAILED");
    expect(err.message).toMatch(/monthly meter: 0 s used \+ 18000 s reserved \+ 300 s \(agent\) would pass 18000 s/);
    expect(err.message).toContain("this month's Sandbox budget is exhausted");
    expect(err.message).toContain("`rhumbatron sandbox budget --set <seconds>`");
    expect(err.details).toMatchObject({
      limit: "sandbox_monthly_seconds",
      blockedLimit: "sandbox_meter",
      tenantId,
      budgetSeconds: 18_000,
      budgetSource: "default",
    });
    expect(await reserved("2026-03")).toBe(18_000);
  });

  it("never passes the cap under 70 concurrent agent reservations of 300 s", async () => {
    const now = new Date("2026-04-15T08:00:00Z");
    const results = await Promise.allSettled(
      Array.from({ length: 70 }, () => reserveSandboxSeconds(t.db, { kind: "agent", tenantId }, config, now)),
    );
    const ok = results.filter((r) => r.status === "fulfilled");
    const no = results.filter((r) => r.status === "rejected");
    expect(ok).toHaveLength(60); // 60 x 300 s = 18,000 s
    expect(no).toHaveLength(10);
    for (const r of no) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "PRECONDITION_FAILED" });
    expect(await reserved("2026-04")).toBe(18_000);
  });

  it("settles what the billing says, releases the reservation and closes the workspace, once", async () => {
    const now = new Date("2026-05-02T00:00:00Z");
    const admission = await admitSandbox(t.db, { changeId: "chg_settle", projectId: "proj_s" }, config);
    const agent = await reserveSandboxSeconds(
      t.db,
      { kind: "agent", changeId: admission.changeId, tenantId },
      config,
      now,
    );
    const cand = await reserveSandboxSeconds(t.db, { kind: "candidate", tenantId }, config, now);
    expect(agent).toMatchObject({ kind: "agent", seconds: 300, window: "2026-05", env: "dev", changeId: "chg_settle" });
    expect(await reserved("2026-05")).toBe(1_200);

    // A container provider also pays the idle tail (600 s for an agent).
    expect(await settleSandbox(t.db, agent, { wallSeconds: 95.2, billing: "container" }, config)).toEqual({
      settled: true,
      usedSeconds: 696,
    });
    expect(await reserved("2026-05")).toBe(900);
    expect(await used("2026-05")).toBe(696);
    expect(await counter(SANDBOX_COUNTERS.openWorkspaces, "chg_settle", "-")).toBe(0);
    // A retried step settles nothing twice.
    expect(await settleSandbox(t.db, agent, { wallSeconds: 95.2, billing: "container" }, config)).toEqual({
      settled: false,
      usedSeconds: 0,
    });
    expect(await used("2026-05")).toBe(696);

    // A local provider (measured; also the default) pays the seconds it ran, rounded up, and no tail.
    expect((await settleSandbox(t.db, cand, { wallSeconds: 29.4 }, config)).usedSeconds).toBe(30);
    expect(await reserved("2026-05")).toBe(0);
    expect(await used("2026-05")).toBe(726);
    expect(await t.db.sandboxCharge.findUniqueOrThrow({ where: { reservationId: cand.id } })).toMatchObject({
      tenantId,
      kind: "candidate",
      reservedSeconds: 900,
      billing: "measured",
      wallSeconds: 30,
      chargedSeconds: 30,
    });
  });

  it("counts used seconds against the cap, and starts a new month fresh", async () => {
    const june = new Date("2026-06-30T23:59:59Z");
    const r = await reserveSandboxSeconds(t.db, { kind: "agent", tenantId }, config, june);
    await settleSandbox(t.db, r, { wallSeconds: 17_700 }, config); // 17,700 used
    expect(await used("2026-06")).toBe(17_700);
    await reserveSandboxSeconds(t.db, { kind: "agent", tenantId }, config, june); // lands on 18,000
    const err = await refusal(reserveSandboxSeconds(t.db, { kind: "agent", tenantId }, config, june));
    expect(err.message).toMatch(/17700 s used \+ 300 s reserved/);

    const july = new Date("2026-07-01T00:00:00Z");
    const fresh = await reserveSandboxSeconds(t.db, { kind: "candidate", tenantId }, config, july);
    expect(fresh.window).toBe("2026-07");
    expect(await reserved("2026-07")).toBe(900);
    expect(await used("2026-07")).toBe(0);
  });

  it("keeps each environment's meter apart", async () => {
    const now = new Date("2026-08-01T00:00:00Z");
    const prod = loadConfig("prod", { sandbox: { monthlySeconds: 300 } });
    await reserveSandboxSeconds(t.db, { kind: "agent", tenantId }, prod, now);
    await refusal(reserveSandboxSeconds(t.db, { kind: "agent", tenantId }, prod, now));
    await reserveSandboxSeconds(t.db, { kind: "agent", tenantId }, config, now);
    expect(await counter(SANDBOX_COUNTERS.reservedSeconds, sandboxMeterScope("prod", tenantId), "2026-08")).toBe(300);
    expect(await reserved("2026-08")).toBe(300);
  });
});
