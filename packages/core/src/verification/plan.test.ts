import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import {
  buildVerificationPlan,
  checksForTier,
  DEFAULT_POLICY,
  targetedTests,
  type VerificationPolicy,
} from "./plan.ts";

const config = loadConfig("dev");
const ids = (p: ReturnType<typeof buildVerificationPlan>) => p.checks.map((c) => c.id);
const change = (riskTier: "low" | "medium" | "high" | "critical", o: { invariants?: string[]; p95?: number } = {}) => ({
  riskTier,
  invariants: o.invariants ?? [],
  goals: o.p95 === undefined ? {} : { p95LatencyMs: o.p95 },
});

describe("buildVerificationPlan", () => {
  it.each([
    ["low", ["build", "targeted"]],
    ["medium", ["build", "targeted", "contract"]],
    ["high", ["build", "targeted", "contract", "security", "browser"]],
    ["critical", ["build", "targeted", "contract", "security", "browser"]],
  ] as const)("%s risk requires %j", (tier, expected) => {
    expect(ids(buildVerificationPlan(change(tier), ["README.md"], DEFAULT_POLICY, config))).toEqual(expected);
  });

  it("adds checks from triggers", () => {
    const p = buildVerificationPlan(
      change("low", { invariants: ["The Cart total never goes negative"], p95: 150 }),
      ["src/authorization.ts"],
      DEFAULT_POLICY,
      config,
    );
    expect(ids(p)).toEqual(["build", "targeted", "protected-invariant-cart", "performance", "security"]);
    expect(p.checks.find((c) => c.id === "performance")?.metric).toEqual({ name: "p95Ms", below: 150 });
    expect(p.humanGate).toBe(true);
    expect(p.humanGateReasons).toEqual(["the change touches authorization"]);
  });

  it("uses the spec's timeouts", () => {
    const p = buildVerificationPlan(change("medium", { p95: undefined }), [], DEFAULT_POLICY, config);
    expect(p.checks.map((c) => [c.id, c.timeoutSeconds])).toEqual([
      ["build", 120],
      ["targeted", 180],
      ["contract", 120],
    ]);
  });

  describe("the performance check's p95 limit", () => {
    const perf = (p95: number | undefined, policy: VerificationPolicy = DEFAULT_POLICY) =>
      buildVerificationPlan(change("low", { p95 }), [], policy, config).checks.find((c) => c.id === "performance");
    const requiring: VerificationPolicy = { ...DEFAULT_POLICY, requiredChecksByRisk: { low: ["performance"] } };

    it("is the policy's limit (config default 200 ms) when a policy requires the check and no goal is set", () => {
      expect(config.checks.defaultP95LimitMs).toBe(200);
      expect(perf(undefined, requiring)).toMatchObject({ timeoutSeconds: 120, metric: { name: "p95Ms", below: 200 } });
      expect(perf(undefined, { ...requiring, p95LimitMs: 80 })?.metric?.below).toBe(80);
    });

    it("is the goal when the goal is tighter", () => {
      expect(perf(150)).toMatchObject({ metric: { below: 150 }, reason: "goal: p95 below 150 ms" });
      expect(perf(50, { ...DEFAULT_POLICY, p95LimitMs: 100 })?.metric?.below).toBe(50);
    });

    it("cannot be loosened by a goal: the policy's limit applies, and the reason says so", () => {
      const looser = perf(600_000);
      expect(looser?.metric?.below).toBe(200);
      expect(looser?.reason).toBe("goal: p95 below 600000 ms, looser than policy-1's limit of 200 ms, which applies");
      expect(perf(150, { ...DEFAULT_POLICY, p95LimitMs: 100 })?.metric?.below).toBe(100);
    });
  });

  it("chooses the browser check's flow: the cart's when the Change touches the Cart", () => {
    const flow = (touched: string[], invariants: string[] = []) =>
      buildVerificationPlan({ ...change("high"), invariants }, touched, DEFAULT_POLICY, config).checks.find(
        (c) => c.id === "browser",
      )?.flow;
    expect(flow(["public/index.html"])).toBe("wishlist");
    expect(flow(["src/cart.ts", "public/index.html"])).toBe("cart");
    expect(flow(["public/index.html"], ["The Cart total never goes negative"])).toBe("cart");
    expect(flow(["src/cartography/map.ts", "public/app.js"])).toBe("wishlist");
  });

  it("adds the browser check for UI at high risk only", () => {
    expect(ids(buildVerificationPlan(change("medium"), ["public/index.html"], DEFAULT_POLICY, config))).not.toContain(
      "browser",
    );
    const policy: VerificationPolicy = {
      ...DEFAULT_POLICY,
      requiredChecksByRisk: { low: ["build"], high: ["build", "contract"] },
    };
    expect(ids(buildVerificationPlan(change("high"), ["public/app.js"], policy, config))).toEqual([
      "build",
      "contract",
      "browser",
    ]);
  });

  it("never lowers verification for a tier the policy leaves out", () => {
    const policy: VerificationPolicy = {
      ...DEFAULT_POLICY,
      requiredChecksByRisk: { low: ["build"], high: ["build", "unit", "security"] },
    };
    expect(checksForTier(policy, "medium")).toEqual(["build", "unit", "security"]);
    expect(checksForTier(policy, "critical")).toEqual(["build", "unit", "security"]);
    expect(checksForTier(DEFAULT_POLICY, "critical")).toEqual(DEFAULT_POLICY.requiredChecksByRisk.high);
  });

  it("gates high and critical risk for a person", () => {
    expect(buildVerificationPlan(change("high"), [], DEFAULT_POLICY, config).humanGate).toBe(true);
    expect(buildVerificationPlan(change("medium"), [], DEFAULT_POLICY, config).humanGate).toBe(false);
  });

  it("targets the tests related to the touched files, or all of them when none relate", () => {
    const tests = ["test/cart.test.ts", "test/cart.invariant.test.ts", "test/wishlist.test.ts"];
    expect(targetedTests(["src/cart.ts"], tests)).toEqual(["test/cart.invariant.test.ts", "test/cart.test.ts"]);
    expect(targetedTests(["README.md"], tests)).toBeNull();
    const p = buildVerificationPlan(change("low"), ["src/wishlist.ts"], DEFAULT_POLICY, config, tests);
    expect(p.checks.find((c) => c.id === "targeted")?.argv).toEqual(["node", "--test", "dist/test/wishlist.test.js"]);
    const all = buildVerificationPlan(change("low"), ["README.md"], DEFAULT_POLICY, config, tests);
    expect(all.checks.find((c) => c.id === "targeted")?.argv).toEqual(["npm", "test"]);
  });
});
