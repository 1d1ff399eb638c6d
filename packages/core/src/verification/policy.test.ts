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
import { shopChecks } from "./shop-checks.testing.ts";

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
        expect(buildVerificationPlan(change, touched, v1, config, shopChecks())).toEqual(
          buildVerificationPlan(change, touched, DEFAULT_POLICY, config, shopChecks()),
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
      shopChecks(),
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
      requiredChecksByRisk: { ...defaults.requiredChecksByRisk, medium: ["build", "Lint!"], high: ["build", "build"] },
      humanGateRiskTiers: ["high", "urgent"],
      commands: { unit: ["sh", "-c", "npm test"], build: [] },
      timeoutSeconds: { ...defaults.timeoutSeconds, unit: 1.5 },
      rerunBudget: 21,
      p95LimitMs: 0,
    };
    expect(problems(bad).split("; ")).toEqual([
      expect.stringMatching(/^requiredChecksByRisk\.medium\[1\]: a check id is 1 to 40 lower-case letters/),
      "requiredChecksByRisk.high[1]: lists check build twice",
      expect.stringMatching(/^humanGateRiskTiers\[1\]: Invalid option: expected one of "low"/),
      expect.stringMatching(/^commands\.unit\[0\]: command "sh" is not on the sandbox allowlist/),
      'commands.build: give the command as argv, e.g. ["npm", "run", "-s", "build"]',
      "timeoutSeconds.unit: whole seconds",
      expect.stringMatching(/^rerunBudget: Too big/),
      expect.stringMatching(/^p95LimitMs: Too small/),
    ]);
    const { rerunBudget: _, ...missing } = defaults;
    expect(problems(missing)).toMatch(/^rerunBudget: Invalid input: expected number/);
    expect(problems({ ...defaults, commands: { build: ["npm", "run\u0000"] } })).toMatch(
      /^commands\.build\[1\]: .*NUL/,
    );
  });

  it("sorts a document's check ids and keys, so the same policy written differently is no change", () => {
    const written: PolicyDocument = {
      ...defaults,
      requiredChecksByRisk: { ...defaults.requiredChecksByRisk, low: ["targeted", "build"] },
      humanGateRiskTiers: ["critical", "high"],
      timeoutSeconds: { unit: 30, build: 20 },
    };
    const sorted: PolicyDocument = {
      ...defaults,
      requiredChecksByRisk: { ...defaults.requiredChecksByRisk, low: ["build", "targeted"] },
      timeoutSeconds: { build: 20, unit: 30 },
    };
    expect(JSON.stringify(canonicalPolicyDocument(written))).toBe(JSON.stringify(sorted));
    expect(changedPolicyFields(sorted, written)).toEqual([]);
    expect(changedPolicyFields(sorted, { ...written, rerunBudget: 0, commands: { unit: ["npm", "test"] } })).toEqual([
      "commands",
      "rerunBudget",
    ]);
  });
});
