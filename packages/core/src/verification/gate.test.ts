import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import { COVERAGES, EVIDENCE_STATUSES, type EvidenceRecord, gateRequiredChecks } from "./gate.ts";
import { buildVerificationPlan, DEFAULT_POLICY } from "./plan.ts";
import { shopChecks } from "./shop-checks.testing.ts";

const config = loadConfig("dev");
const plan = buildVerificationPlan(
  { riskTier: "low", invariants: [], goals: { p95LatencyMs: 200 } },
  [],
  DEFAULT_POLICY,
  config,
  shopChecks(),
);
const t = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000);
const rec = (checkId: string, o: Partial<EvidenceRecord> = {}): EvidenceRecord => ({
  id: `ev_${checkId}_${Math.random()}`,
  checkId,
  status: "pass",
  coverage: "checked_supported",
  durationMs: 1000,
  timeoutSeconds: 120,
  completedAt: t(1),
  metrics: checkId === "performance" ? { p95Ms: 10 } : {},
  outputKey: null,
  detail: "",
  excerpt: null,
  ...o,
});
const allPass = () => plan.checks.map((c) => rec(c.id));

describe("gateRequiredChecks", () => {
  it("is promotable only when every required check has a supported pass", () => {
    expect(gateRequiredChecks(plan, allPass()).promotable).toBe(true);
  });

  it.each([
    ["missing", () => allPass().filter((r) => r.checkId !== "build")],
    ["timed_out", () => allPass().map((r) => (r.checkId === "build" ? { ...r, durationMs: 120_001 } : r))],
    ["skipped", () => allPass().map((r) => (r.checkId === "build" ? { ...r, status: "skipped" as const } : r))],
    ["error", () => allPass().map((r) => (r.checkId === "build" ? { ...r, status: "error" as const } : r))],
    ["failed", () => allPass().map((r) => (r.checkId === "build" ? { ...r, status: "fail" as const } : r))],
    [
      "not_checked",
      () => allPass().map((r) => (r.checkId === "build" ? { ...r, coverage: "not_checked" as const } : r)),
    ],
    [
      "no_signal",
      () => allPass().map((r) => (r.checkId === "build" ? { ...r, coverage: "checked_no_signal" as const } : r)),
    ],
    [
      "expectation_not_met",
      () => allPass().map((r) => (r.checkId === "performance" ? { ...r, metrics: { p95Ms: 200 } } : r)),
    ],
  ])("reports the %s gap", (kind, records) => {
    const g = gateRequiredChecks(plan, records());
    expect(g.promotable).toBe(false);
    expect(g.gaps.map((x) => x.gap)).toEqual([kind]);
  });

  it("a failed or erroring check's gap says how it ended and carries its first failure lines; other gaps none", () => {
    const excerpt = ["src/cart.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'."];
    const with_ = (o: Partial<EvidenceRecord>) =>
      gateRequiredChecks(
        plan,
        allPass().map((r) => (r.checkId === "build" ? { ...r, ...o } : r)),
      ).gaps;
    expect(with_({ status: "fail", detail: "exited with 2", excerpt })).toEqual([
      expect.objectContaining({ gap: "failed", detail: "the check failed: exited with 2", excerpt }),
    ]);
    expect(with_({ status: "error", detail: "timed out after 120 s", excerpt })).toEqual([
      expect.objectContaining({ gap: "error", detail: "the check could not run: timed out after 120 s", excerpt }),
    ]);
    expect(with_({ status: "error", detail: "the check could not run: no workspace", excerpt: null })[0]?.detail).toBe(
      "the check could not run: no workspace",
    );
    // A record from before details were kept still reads as before.
    expect(with_({ status: "fail", detail: "", excerpt: null })).toEqual([
      expect.objectContaining({ gap: "failed", detail: "the check failed", excerpt: [] }),
    ]);
    expect(with_({ status: "skipped", detail: "no browser runs left", excerpt })[0]?.excerpt).toEqual([]);
    expect(with_({ coverage: "checked_no_signal", excerpt })[0]?.excerpt).toEqual([]);
  });

  it("reads the latest record; on a tie a non-passing record wins", () => {
    const later = [
      ...allPass().filter((r) => r.checkId !== "build"),
      rec("build", { status: "fail", completedAt: t(1) }),
      rec("build", { completedAt: t(2) }),
    ];
    expect(gateRequiredChecks(plan, later).promotable).toBe(true);
    const tie = [
      ...allPass().filter((r) => r.checkId !== "build"),
      rec("build", { completedAt: t(5) }),
      rec("build", { status: "error", completedAt: t(5) }),
    ];
    expect(gateRequiredChecks(plan, tie).gaps.map((x) => x.gap)).toEqual(["error"]);
  });

  it("property: no combination of records makes a plan with any gap promotable", () => {
    const record = fc.record({
      checkId: fc.constantFrom(...plan.checks.map((c) => c.id), "other"),
      status: fc.constantFrom(...EVIDENCE_STATUSES),
      coverage: fc.constantFrom(...COVERAGES),
      durationMs: fc.integer({ min: 0, max: 200_000 }),
      at: fc.integer({ min: 0, max: 5 }),
      p95: fc.option(fc.double({ min: 0, max: 400, noNaN: true }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(record, { maxLength: 12 }), (rows) => {
        const records: EvidenceRecord[] = rows.map((r, i) => ({
          id: `ev_${i}`,
          checkId: r.checkId,
          status: r.status,
          coverage: r.coverage,
          durationMs: r.durationMs,
          timeoutSeconds: 120,
          completedAt: t(r.at),
          metrics: (r.p95 === undefined ? {} : { p95Ms: r.p95 }) as Record<string, number>,
          outputKey: null,
          detail: "",
          excerpt: null,
        }));
        const g = gateRequiredChecks(plan, records);
        if (g.promotable) {
          // Then, for every required check, its latest record (ties included) is a supported pass within time.
          for (const c of plan.checks) {
            const mine = records.filter((r) => r.checkId === c.id);
            const last = Math.max(...mine.map((r) => r.completedAt.getTime()));
            for (const r of mine.filter((x) => x.completedAt.getTime() === last)) {
              expect(r.status).toBe("pass");
              expect(r.coverage).toBe("checked_supported");
              expect(r.durationMs).toBeLessThanOrEqual(c.timeoutSeconds * 1000);
              if (c.metric) expect(r.metrics.p95Ms).toBeLessThan(c.metric.below);
            }
          }
        } else {
          expect(g.gaps.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
