import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import { parseChecksFile } from "./checks-file.ts";
import {
  buildVerificationPlan,
  checksForTier,
  DEFAULT_POLICY,
  type ProjectChecks,
  type VerificationPolicy,
} from "./plan.ts";
import { STEPS_BROWSER_CHECK, shopChecks } from "./shop-checks.testing.ts";

const config = loadConfig("dev");
const shop = shopChecks();
const ids = (p: ReturnType<typeof buildVerificationPlan>) => p.checks.map((c) => c.id);
const change = (riskTier: "low" | "medium" | "high" | "critical", o: { invariants?: string[]; p95?: number } = {}) => ({
  riskTier,
  invariants: o.invariants ?? [],
  goals: o.p95 === undefined ? {} : { p95LatencyMs: o.p95 },
});
const plan = (
  c: ReturnType<typeof change>,
  touched: string[] = [],
  policy: VerificationPolicy = DEFAULT_POLICY,
  project: ProjectChecks = shop,
) => buildVerificationPlan(c, touched, policy, config, project);
function file(text: string): ProjectChecks {
  const r = parseChecksFile(text);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return { source: { kind: "file", path: ".rhumbatron/checks.yml", commit: "c".repeat(40) }, file: r.file };
}

describe("buildVerificationPlan, from the project's checks file", () => {
  it.each([
    ["low", ["build", "targeted"]],
    ["medium", ["build", "targeted", "contract"]],
    ["high", ["build", "targeted", "contract", "security", "browser"]],
    ["critical", ["build", "targeted", "contract", "security", "browser"]],
  ] as const)("the shop's file at %s risk applies %j", (tier, expected) => {
    expect(ids(plan(change(tier), ["README.md"]))).toEqual(expected);
  });

  it("applies checks by invariant, goal and path, and says why", () => {
    const p = plan(change("low", { invariants: ["The Cart total never goes negative"], p95: 150 }), [
      "src/authorization.ts",
    ]);
    expect(ids(p)).toEqual(["build", "targeted", "protected-invariant-cart", "performance", "security"]);
    const by = (id: string) => p.checks.find((c) => c.id === id);
    expect(by("performance")?.metric).toEqual({ name: "p95Ms", below: 150 });
    expect(by("performance")?.reason).toBe(
      ".rhumbatron/checks.yml: the Change sets a p95 goal; goal: p95 below 150 ms",
    );
    expect(by("protected-invariant-cart")?.reason).toBe(".rhumbatron/checks.yml: an invariant names cart");
    expect(by("security")?.reason).toBe(
      ".rhumbatron/checks.yml: src/authorization.ts matches **/auth*, **/authz*, **/authorization*, **/permission*, **/role*",
    );
    expect(p.humanGate).toBe(true);
    expect(p.humanGateReasons).toEqual(["the change touches authorization"]);
    expect(p.checksSource).toEqual(shop.source);
    expect(p.requires).toEqual(["node>=20"]);
  });

  it("reads kinds, reports, procedures and timeouts from the file; the check that prepares runs first", () => {
    const p = plan(change("high"), ["public/app.js"]);
    expect(p.checks.map((c) => [c.id, c.kind, c.timeoutSeconds])).toEqual([
      ["build", "build", 120],
      ["targeted", "unit", 180],
      ["contract", "contract", 120],
      ["security", "unit", 180],
      ["browser", "browser", 120],
    ]);
    expect(p.checks[0]?.prepares).toBe(true);
    expect(p.checks.find((c) => c.id === "security")?.report).toEqual({
      format: "junit",
      path: "dist/security.junit.xml",
    });
    // The shop's browser check is its own Playwright tests, against its built server.
    expect(p.checks.find((c) => c.id === "browser")).toMatchObject({
      procedure: "playwright",
      tests: "e2e",
      argv: ["node", "dist/src/server.js"],
    });
    expect(p.checks.find((c) => c.id === "browser")?.steps).toBeUndefined();
    // A project whose browser check declares steps has them in the plan.
    const steps = plan(change("high"), [], DEFAULT_POLICY, file(STEPS_BROWSER_CHECK)).checks.find(
      (c) => c.id === "browser",
    );
    expect(steps).toMatchObject({ kind: "browser", procedure: "browser", timeoutSeconds: 90 });
    expect(steps?.steps?.[3]).toEqual({ click: "add-to-wishlist-mug" });
    const first = file(
      "version: 1\nchecks:\n  - id: test\n    run: [npm, test]\n  - id: build\n    run: [npm, run, build]\n    prepares: true\n",
    );
    expect(ids(plan(change("low"), [], DEFAULT_POLICY, first))).toEqual(["build", "test"]);
  });

  it("runs only the related tests of the changed files when the file says how, else the whole suite", () => {
    const targeted = (touched: string[]) => plan(change("low"), touched).checks.find((c) => c.id === "targeted");
    expect(targeted(["src/cart.ts", "public/app.js"])).toMatchObject({
      argv: ["node", "scripts/related-tests.mjs", "src/cart.ts", "public/app.js"],
      related: true,
    });
    expect(targeted([])).toMatchObject({ argv: ["node", "scripts/related-tests.mjs"] });
    expect(targeted([])?.related).toBeUndefined();
  });

  describe("the performance check's p95 limit", () => {
    const perf = (p95: number | undefined, policy: VerificationPolicy = DEFAULT_POLICY) =>
      plan(change("low", { p95 }), [], policy).checks.find((c) => c.id === "performance");
    const requiring: VerificationPolicy = { ...DEFAULT_POLICY, requiredChecksByRisk: { low: ["performance"] } };

    it("is the policy's limit (config default 200 ms) when a policy requires the check and no goal is set", () => {
      expect(config.checks.defaultP95LimitMs).toBe(200);
      expect(perf(undefined, requiring)).toMatchObject({ timeoutSeconds: 120, metric: { name: "p95Ms", below: 200 } });
      expect(perf(undefined, { ...requiring, p95LimitMs: 80 })?.metric?.below).toBe(80);
    });

    it("is the goal when the goal is tighter", () => {
      expect(perf(150)?.metric?.below).toBe(150);
      expect(perf(50, { ...DEFAULT_POLICY, p95LimitMs: 100 })?.metric?.below).toBe(50);
    });

    it("cannot be loosened by a goal: the policy's limit applies, and the reason says so", () => {
      const looser = perf(600_000);
      expect(looser?.metric?.below).toBe(200);
      expect(looser?.reason).toMatch(
        /goal: p95 below 600000 ms, looser than policy-1's limit of 200 ms, which applies$/,
      );
      expect(perf(150, { ...DEFAULT_POLICY, p95LimitMs: 100 })?.metric?.below).toBe(100);
    });

    it("a limit the file sets is tightened by a goal, never loosened", () => {
      const own = file(
        "version: 1\nchecks:\n  - id: bench\n    run: [node, bench.js]\n    metric: { name: p95Ms, below: 120 }\n",
      );
      const below = (p95?: number) =>
        plan(change("low", p95 === undefined ? {} : { p95 }), [], DEFAULT_POLICY, own).checks[0]?.metric?.below;
      expect(below()).toBe(120);
      expect(below(90)).toBe(90);
      expect(below(500)).toBe(120);
    });
  });

  it("adds what the policy requires by tier; a check the file does not declare is planned as undeclared, never dropped", () => {
    const policy: VerificationPolicy = { ...DEFAULT_POLICY, requiredChecksByRisk: { low: ["security", "lint"] } };
    const p = plan(change("low"), ["README.md"], policy);
    expect(ids(p)).toEqual(["build", "targeted", "security", "lint"]);
    expect(p.checks.find((c) => c.id === "security")?.reason).toBe("required for low risk by policy-1");
    expect(p.checks.find((c) => c.id === "lint")).toMatchObject({
      argv: null,
      undeclared: true,
      reason: "required for low risk by policy-1, but .rhumbatron/checks.yml declares no check lint",
    });
  });

  it("never lowers verification for a tier the policy leaves out", () => {
    const policy: VerificationPolicy = {
      ...DEFAULT_POLICY,
      requiredChecksByRisk: { low: ["build"], high: ["build", "unit", "security"] },
    };
    expect(checksForTier(policy, "medium")).toEqual(["build", "unit", "security"]);
    expect(checksForTier(policy, "critical")).toEqual([]);
    expect(checksForTier(DEFAULT_POLICY, "critical")).toEqual([]);
  });

  it("gates high and critical risk, and any Change that edits the project's gate, for a person", () => {
    expect(plan(change("high")).humanGate).toBe(true);
    expect(plan(change("medium")).humanGate).toBe(false);
    const edits = plan(change("low"), ["src/a.ts", ".rhumbatron/checks.yml"]);
    expect(edits.humanGate).toBe(true);
    expect(edits.editsTheGate).toEqual([".rhumbatron/checks.yml"]);
    expect(edits.humanGateReasons).toEqual([
      "the change edits the project's gate (.rhumbatron/checks.yml); it applies from the next generation",
    ]);
  });

  it("lets commands start the tools the file requires, and no others", () => {
    const py = file("version: 1\nrequires: [python3, pytest>=7]\nchecks:\n  - id: test\n    run: [pytest, -q]\n");
    expect(plan(change("low"), [], DEFAULT_POLICY, py).checks[0]?.tools).toEqual(["python3", "pytest"]);
    expect(plan(change("low")).checks[0]?.tools).toBeUndefined();
  });

  it("plans nothing when no check applies: the gate then refuses to call the Candidate verified", () => {
    const only = file("version: 1\nchecks:\n  - id: e2e\n    run: [npm, run, e2e]\n    when:\n      - tiers: [high]\n");
    expect(plan(change("low"), [], DEFAULT_POLICY, only).checks).toEqual([]);
  });
});
