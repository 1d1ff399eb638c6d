import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import { RISK_TIERS } from "../work-graph/model.ts";
import { buildVerificationPlan, DEFAULT_POLICY } from "./plan.ts";
import {
  canonicalPolicyDocument,
  changedPolicyFields,
  defaultPolicyDocument,
  type PolicyDocument,
  policyDocumentProblems,
  policyDocumentSchema,
  policyFromDocument,
} from "./policy.ts";

const config = loadConfig("dev");
const defaults = defaultPolicyDocument(config);

/** The problems of a document the schema refuses (and a failure if it accepts it). */
function problems(doc: unknown): string {
  const r = policyDocumentSchema.safeParse(doc);
  if (r.success) throw new Error("the schema accepted the document");
  return policyDocumentProblems(r.error);
}

describe("the policy document", () => {
  it.each([["README.md"], ["src/auth/roles.ts", "public/index.html"], ["src/cart.ts"]])(
    "version 1 (the defaults) plans exactly as the built-in policy did, touching %s",
    (...touched) => {
      const v1 = policyFromDocument(defaults, 1);
      for (const riskTier of RISK_TIERS) {
        const change = { riskTier, invariants: ["the cart total never changes"], goals: { p95LatencyMs: 150 } };
        expect(buildVerificationPlan(change, touched, v1, config)).toEqual(
          buildVerificationPlan(change, touched, DEFAULT_POLICY, config),
        );
      }
      expect(v1.rerunBudget).toBe(config.checks.rerunsPerCheck);
      expect(policyDocumentSchema.parse(defaults)).toEqual(defaults);
    },
  );

  it("a version's timeouts and commands are what its plan runs", () => {
    const doc: PolicyDocument = {
      ...defaults,
      commands: { build: ["npm", "run", "-s", "compile"] },
      timeoutSeconds: { ...defaults.timeoutSeconds, build: 30, targeted: 40 },
    };
    const plan = buildVerificationPlan(
      { riskTier: "low", invariants: [], goals: {} },
      [],
      policyFromDocument(doc, 3),
      config,
    );
    expect(plan).toMatchObject({ policyId: "policy-1", policyVersion: 3 });
    expect(plan.checks.map((c) => [c.id, c.timeoutSeconds, c.argv?.[3]])).toEqual([
      ["build", 30, "compile"],
      ["targeted", 40, undefined],
    ]);
  });

  it("refuses a bad document naming every wrong field", () => {
    const bad = {
      ...defaults,
      requiredChecksByRisk: { ...defaults.requiredChecksByRisk, medium: ["build", "lint"], high: ["build", "build"] },
      humanGateRiskTiers: ["high", "urgent"],
      commands: { browser: ["node", "x.js"], unit: ["sh", "-c", "npm test"], build: [] },
      timeoutSeconds: { ...defaults.timeoutSeconds, unit: 1.5 },
      rerunBudget: 21,
      p95LimitMs: 0,
    };
    expect(problems(bad).split("; ")).toEqual([
      expect.stringMatching(/^requiredChecksByRisk\.medium\[1\]: Invalid option: expected one of "build"/),
      "requiredChecksByRisk.high[1]: lists check build twice",
      expect.stringMatching(/^humanGateRiskTiers\[1\]: Invalid option: expected one of "low"/),
      'commands.build: give the command as argv, e.g. ["npm", "run", "-s", "build"]',
      expect.stringMatching(/^commands\.unit\[0\]: command "sh" is not on the sandbox allowlist/),
      "commands: browser is not a check that runs a command: give one of build, targeted, unit, contract, protected-invariant-cart, performance, security",
      "timeoutSeconds.unit: whole seconds",
      expect.stringMatching(/^rerunBudget: Too big/),
      expect.stringMatching(/^p95LimitMs: Too small/),
    ]);
    const { rerunBudget: _, ...missing } = defaults;
    expect(problems(missing)).toMatch(/^rerunBudget: Invalid input: expected number/);
    expect(problems({ ...defaults, requiredChecksByRisk: { ...defaults.requiredChecksByRisk, low: [] } })).toBe(
      "requiredChecksByRisk.low: list at least one check: a tier without checks would promote untested code",
    );
    expect(problems({ ...defaults, commands: { build: ["npm", "run\u0000"] } })).toMatch(
      /^commands\.build\[1\]: .*NUL/,
    );
  });

  it("puts a document in catalogue order, so the same policy written differently is no change", () => {
    const shuffled: PolicyDocument = {
      ...defaults,
      requiredChecksByRisk: { ...defaults.requiredChecksByRisk, low: ["targeted", "build"] },
      humanGateRiskTiers: ["critical", "high"],
    };
    expect(canonicalPolicyDocument(shuffled)).toEqual(defaults);
    expect(JSON.stringify(canonicalPolicyDocument(shuffled))).toBe(JSON.stringify(defaults));
    expect(changedPolicyFields(defaults, shuffled)).toEqual([]);
    expect(changedPolicyFields(defaults, { ...shuffled, rerunBudget: 0, commands: { unit: ["npm", "test"] } })).toEqual(
      ["commands", "rerunBudget"],
    );
  });
});
