import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
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

  it("settles wall time (rounded up) plus the idle tail of the kind", () => {
    expect(settleSeconds({ wallSeconds: 42, kind: "agent" }, config)).toBe(642);
    expect(settleSeconds({ wallSeconds: 42.1, kind: "candidate" }, config)).toBe(163);
    expect(settleSeconds({ wallSeconds: 0, kind: "candidate" }, config)).toBe(120);
    expect(() => settleSeconds({ wallSeconds: -1, kind: "agent" }, config)).toThrow(/>= 0/);
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
