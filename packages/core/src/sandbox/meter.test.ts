import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import {
  BUDGET_BLOCKED_TASK_RESUMES,
  RAISE_SANDBOX_BUDGET,
  resolveSandboxBudget,
  SANDBOX_BUDGET_MAX_SECONDS,
  sandboxBudgetSecondsSchema,
} from "./budget.ts";
import { decideAdmission, decideReservation, meterWindow, settleSeconds } from "./meter.ts";

const config = loadConfig("dev");

describe("sandbox meter arithmetic", () => {
  it("admits up to four open workspaces per Change", () => {
    expect(decideAdmission(0, config)).toBe("admit");
    expect(decideAdmission(3, config)).toBe("admit");
    expect(decideAdmission(4, config)).toBe("too_many_workspaces");
  });

  it("reserves 300 s for an agent and 900 s for a Candidate check", () => {
    expect(decideReservation({ usedSeconds: 0, reservedSeconds: 0, request: "agent" }, config)).toEqual({
      ok: true,
      reserve: 300,
    });
    expect(decideReservation({ usedSeconds: 0, reservedSeconds: 0, request: "candidate" }, config)).toEqual({
      ok: true,
      reserve: 900,
    });
  });

  it("allows a reservation landing exactly on 18,000 s and refuses one second more", () => {
    expect(decideReservation({ usedSeconds: 17_000, reservedSeconds: 700, request: "agent" }, config).ok).toBe(true);
    const refused = decideReservation({ usedSeconds: 17_001, reservedSeconds: 700, request: "agent" }, config);
    expect(refused).toEqual({ ok: false, reason: expect.stringMatching(/monthly meter.*would pass 18000 s/) });
    expect(decideReservation({ usedSeconds: 17_100, reservedSeconds: 0, request: "candidate" }, config).ok).toBe(true);
    expect(decideReservation({ usedSeconds: 17_101, reservedSeconds: 0, request: "candidate" }, config).ok).toBe(false);
  });

  it("charges a measured (local) workspace the seconds it ran, rounded up, and nothing more", () => {
    expect(settleSeconds({ wallSeconds: 42, kind: "agent", billing: "measured" }, config)).toBe(42);
    expect(settleSeconds({ wallSeconds: 42.1, kind: "candidate", billing: "measured" }, config)).toBe(43);
    expect(settleSeconds({ wallSeconds: 2.01, kind: "agent", billing: "measured" }, config)).toBe(3);
    expect(settleSeconds({ wallSeconds: 0, kind: "candidate", billing: "measured" }, config)).toBe(0);
    expect(() => settleSeconds({ wallSeconds: -1, kind: "agent", billing: "measured" }, config)).toThrow(/>= 0/);
  });

  it("charges a container workspace its wall time plus the idle tail of the kind", () => {
    expect(settleSeconds({ wallSeconds: 42, kind: "agent", billing: "container" }, config)).toBe(642);
    expect(settleSeconds({ wallSeconds: 42.1, kind: "candidate", billing: "container" }, config)).toBe(163);
    expect(settleSeconds({ wallSeconds: 0, kind: "candidate", billing: "container" }, config)).toBe(120);
    expect(() => settleSeconds({ wallSeconds: Number.NaN, kind: "agent", billing: "container" }, config)).toThrow(
      />= 0/,
    );
  });

  it("fits 200 short measured agent runs in the default budget, where the idle tail allowed 30", () => {
    const measured = settleSeconds({ wallSeconds: 3, kind: "agent", billing: "measured" }, config);
    const container = settleSeconds({ wallSeconds: 3, kind: "agent", billing: "container" }, config);
    // Each run reserves 300 s; at settle the reservation is released and only the charge stays.
    const fits = (charge: number) => Math.floor((config.sandbox.monthlySeconds - 300) / charge) + 1;
    expect(fits(container)).toBe(30);
    expect(fits(measured)).toBeGreaterThanOrEqual(200);
  });

  it("takes the tenant's budget first, then the deployment's setting, then the config default", () => {
    const withSetting = loadConfig("dev", { sandbox: { deploymentMonthlySeconds: 72_000 } });
    expect(resolveSandboxBudget(null, config)).toEqual({ seconds: 18_000, source: "default" });
    expect(resolveSandboxBudget(null, withSetting)).toEqual({ seconds: 72_000, source: "setting" });
    expect(resolveSandboxBudget(5_000, withSetting)).toEqual({ seconds: 5_000, source: "tenant" });
    const budget = resolveSandboxBudget(36_000, config);
    expect(decideReservation({ usedSeconds: 35_700, reservedSeconds: 0, request: "agent", budget }, config).ok).toBe(
      true,
    );
    expect(decideReservation({ usedSeconds: 35_701, reservedSeconds: 0, request: "agent", budget }, config).ok).toBe(
      false,
    );
  });

  it("says the budget is exhausted, whose it is, and how to raise it", () => {
    const refused = decideReservation(
      { usedSeconds: 18_000, reservedSeconds: 0, request: "agent", budget: { seconds: 18_000, source: "setting" } },
      config,
    );
    if (refused.ok) throw new Error("expected a refusal");
    expect(refused.reason).toContain("18000 s used + 0 s reserved + 300 s (agent) would pass 18000 s");
    expect(refused.reason).toContain("RHUMBATRON_SANDBOX_MONTHLY_SECONDS): this month's Sandbox budget is exhausted");
    expect(refused.reason).toContain(RAISE_SANDBOX_BUDGET);
    expect(RAISE_SANDBOX_BUDGET).toMatch(/\/operations/);
    expect(RAISE_SANDBOX_BUDGET).toMatch(/rhumbatron sandbox budget --set <seconds>/);
    expect(RAISE_SANDBOX_BUDGET).toMatch(/RHUMBATRON_SANDBOX_MONTHLY_SECONDS/);
  });

  it("tells an agent's refusal that its Task resumes by itself, and a Candidate's check nothing of the kind", () => {
    const exhausted = {
      usedSeconds: 18_000,
      reservedSeconds: 0,
      budget: { seconds: 18_000, source: "default" as const },
    };
    const agent = decideReservation({ ...exhausted, request: "agent" }, config);
    const candidate = decideReservation({ ...exhausted, request: "candidate" }, config);
    if (agent.ok || candidate.ok) throw new Error("expected refusals");
    expect(agent.reason).toMatch(/resumes by itself once the budget is raised or the month turns/);
    expect(agent.reason.endsWith(BUDGET_BLOCKED_TASK_RESUMES)).toBe(true);
    expect(candidate.reason).toContain(RAISE_SANDBOX_BUDGET);
    expect(candidate.reason).not.toContain(BUDGET_BLOCKED_TASK_RESUMES);
  });

  it("accepts a budget of whole seconds between 1 and the maximum", () => {
    expect(sandboxBudgetSecondsSchema.parse(72_000)).toBe(72_000);
    expect(sandboxBudgetSecondsSchema.parse(SANDBOX_BUDGET_MAX_SECONDS)).toBe(26_784_000);
    for (const bad of [0, -5, 1.5, SANDBOX_BUDGET_MAX_SECONDS + 1, Number.NaN]) {
      expect(sandboxBudgetSecondsSchema.safeParse(bad).success, String(bad)).toBe(false);
    }
  });

  it("meters by UTC month, turning over at midnight UTC on the first", () => {
    expect(meterWindow(new Date("2026-01-31T23:59:59.999Z"))).toBe("2026-01");
    expect(meterWindow(new Date("2026-02-01T00:00:00.000Z"))).toBe("2026-02");
    expect(meterWindow(new Date("2026-12-31T23:59:59Z"))).toBe("2026-12");
    expect(meterWindow(new Date("2027-01-01T00:00:00Z"))).toBe("2027-01");
    // 23:30 on 31 March in UTC-1 is already April in UTC.
    expect(meterWindow(new Date("2026-03-31T23:30:00-01:00"))).toBe("2026-04");
  });

  it("follows the configured numbers", () => {
    const small = loadConfig("dev", { sandbox: { monthlySeconds: 600, openWorkspacesPerChange: 1 } });
    expect(decideAdmission(1, small)).toBe("too_many_workspaces");
    expect(decideReservation({ usedSeconds: 300, reservedSeconds: 0, request: "agent" }, small).ok).toBe(true);
    expect(decideReservation({ usedSeconds: 301, reservedSeconds: 0, request: "agent" }, small).ok).toBe(false);
  });
});
