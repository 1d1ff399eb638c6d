import type { RhumbatronConfig } from "../config.ts";
import { RISK_TIERS, type RiskTier } from "../work-graph/model.ts";

/**
 * The Verification Plan (spec: Which checks run): which checks a Candidate must pass, from the
 * Change's risk tier under the policy and from what its ChangeSets touch.
 */
export const CHECK_IDS = [
  "build",
  "targeted",
  "unit",
  "contract",
  "protected-invariant-cart",
  "performance",
  "security",
  "browser",
] as const;
export type CheckId = (typeof CHECK_IDS)[number];
export type CheckKind = "build" | "unit" | "contract" | "protected-invariant" | "performance" | "security" | "browser";

export interface VerificationPolicy {
  id: string;
  version: number;
  /** Risk tiers the policy lists; an unlisted tier uses the strictest listed one. */
  requiredChecksByRisk: Partial<Record<RiskTier, CheckId[]>>;
  /** Tiers whose Candidates need a person's approval. */
  humanGateRiskTiers: RiskTier[];
  /** Per-project command overrides (argv), by check. */
  commands?: Partial<Record<CheckId, string[]>>;
  /** The performance check's p95 limit; unset: config.checks.defaultP95LimitMs. A goal may only tighten it. */
  p95LimitMs?: number;
  /** Each check's timeout, by check; unset: config.checks.timeoutsSeconds (`targeted`: the unit timeout). */
  timeoutSeconds?: Partial<Record<CheckId, number>>;
  /** How often one check of one Candidate may be rerun; unset: config.checks.rerunsPerCheck. */
  rerunBudget?: number;
}

/**
 * The performance check's bound: the policy's limit, or the Change's goal when that is tighter. A
 * goal looser than the policy does not loosen it (the reason says so).
 */
export function p95Bound(
  goalMs: number | undefined,
  policy: VerificationPolicy,
  config: RhumbatronConfig,
): { belowMs: number; reason: string } {
  const limit = policy.p95LimitMs ?? config.checks.defaultP95LimitMs;
  if (goalMs === undefined) return { belowMs: limit, reason: `${policy.id}'s p95 limit, ${limit} ms` };
  if (goalMs <= limit) return { belowMs: goalMs, reason: `goal: p95 below ${goalMs} ms` };
  return {
    belowMs: limit,
    reason: `goal: p95 below ${goalMs} ms, looser than ${policy.id}'s limit of ${limit} ms, which applies`,
  };
}

export const DEFAULT_POLICY: VerificationPolicy = {
  id: "policy-1",
  version: 1,
  requiredChecksByRisk: {
    low: ["build", "targeted"],
    medium: ["build", "targeted", "contract"],
    high: ["build", "targeted", "contract", "security", "browser"],
  },
  humanGateRiskTiers: ["high", "critical"],
};

/**
 * The template's commands (node equivalents of the spec's bun commands). `targeted` runs the
 * compiled tests related to the touched paths (see targetedTests); `browser` is a procedure, not a
 * command.
 */
export const DEFAULT_COMMANDS: Record<Exclude<CheckId, "browser" | "targeted">, string[]> = {
  build: ["npm", "run", "-s", "build"],
  unit: ["npm", "test"],
  contract: ["npm", "run", "-s", "contract"],
  "protected-invariant-cart": ["npm", "run", "-s", "test:cart"],
  performance: ["npm", "run", "-s", "bench"],
  security: ["npm", "run", "-s", "test:authorization"],
};

const KIND: Record<CheckId, CheckKind> = {
  build: "build",
  targeted: "unit",
  unit: "unit",
  contract: "contract",
  "protected-invariant-cart": "protected-invariant",
  performance: "performance",
  security: "security",
  browser: "browser",
};

/**
 * Checks that are test runs: passing one means at least one test ran (README: Checks), so one that
 * printed no readable test count is a gap however it exited.
 */
export const TEST_CHECK_KINDS: readonly CheckKind[] = ["unit", "protected-invariant", "security"];
export const isTestCheck = (check: { kind: CheckKind }) => TEST_CHECK_KINDS.includes(check.kind);

export interface PlannedCheck {
  id: CheckId;
  kind: CheckKind;
  timeoutSeconds: number;
  /** null for the browser procedure. */
  argv: string[] | null;
  /** A metric the check must report below a bound (performance: p95Ms). */
  metric?: { name: string; below: number };
  /** The browser check's flow: the cart's when the Change touches the Cart, else the wishlist's. */
  flow?: BrowserFlow;
  reason: string;
}

export type BrowserFlow = "wishlist" | "cart";

/**
 * Which flow the browser check drives: the cart flow when the Change touches the Cart (an invariant
 * names it, or a changed path is the Cart's), since the Cart is the protected invariant; the
 * wishlist flow otherwise.
 */
export function browserFlowFor(change: { invariants: readonly string[] }, touched: readonly string[]): BrowserFlow {
  return change.invariants.some(namesTheCart) || touched.some(touchesTheCart) ? "cart" : "wishlist";
}

export interface VerificationPlan {
  policyId: string;
  policyVersion: number;
  riskTier: RiskTier;
  checks: PlannedCheck[];
  humanGate: boolean;
  humanGateReasons: string[];
}

export interface PlanInput {
  riskTier: RiskTier;
  invariants: readonly string[];
  goals: { p95LatencyMs?: number | undefined };
}

const names = (re: RegExp) => (p: string) => re.test(p);
export const touchesAuthorization = names(/(^|\/)(auth|authz|authorization|permissions?|roles?)([./_-]|$)/i);
export const touchesUi = names(/(^|\/)(public|ui|pages|components)\/|\.(html|css|tsx|jsx)$|(^|\/)app\.js$/i);
export const namesTheCart = (invariant: string) => /\bcart\b/i.test(invariant);
/** A path of the Cart's (its module, handlers or page), by name. */
export const touchesTheCart = names(/(^|\/)[^/]*cart[^/]*$/i);

/** The strictest tier the policy lists at or above `tier`, else the strictest listed overall: never lower. */
export function checksForTier(policy: VerificationPolicy, tier: RiskTier): CheckId[] {
  const rank = RISK_TIERS.indexOf(tier);
  const listed = RISK_TIERS.filter((t) => policy.requiredChecksByRisk[t]);
  const atOrAbove = listed.filter((t) => RISK_TIERS.indexOf(t) >= rank);
  const use = policy.requiredChecksByRisk[tier] ? tier : (atOrAbove[0] ?? listed.at(-1));
  return use ? [...(policy.requiredChecksByRisk[use] ?? [])] : ["build", "unit"];
}

/**
 * `targeted`: the compiled tests whose file name starts with a touched source file's name
 * (src/cart.ts -> test/cart.test.ts and test/cart.invariant.test.ts) plus touched tests. When
 * nothing maps, the whole unit suite runs: a gap in the mapping never lowers verification.
 */
export function targetedTests(touched: readonly string[], testFiles: readonly string[]): string[] | null {
  const stems = touched
    .map(
      (p) =>
        p
          .split("/")
          .at(-1)
          ?.replace(/\.(test\.)?[tj]sx?$/, "") ?? "",
    )
    .filter(Boolean);
  const picked = testFiles.filter((t) => {
    const base = t.split("/").at(-1) ?? "";
    return touched.includes(t) || stems.some((s) => base.startsWith(`${s}.`));
  });
  return picked.length ? picked.sort() : null;
}

export function buildVerificationPlan(
  change: PlanInput,
  touched: readonly string[],
  policy: VerificationPolicy,
  config: RhumbatronConfig,
  testFiles: readonly string[] = [],
): VerificationPlan {
  const reasons = new Map<CheckId, string>();
  for (const id of checksForTier(policy, change.riskTier))
    reasons.set(id, `required for ${change.riskTier} risk by ${policy.id}`);
  if (change.invariants.some(namesTheCart)) reasons.set("protected-invariant-cart", "an invariant names the Cart");
  const p95 = p95Bound(change.goals.p95LatencyMs, policy, config);
  if (change.goals.p95LatencyMs !== undefined) reasons.set("performance", p95.reason);
  const auth = touched.some(touchesAuthorization);
  if (auth) reasons.set("security", "the change touches authorization");
  const highRisk = RISK_TIERS.indexOf(change.riskTier) >= RISK_TIERS.indexOf("high");
  if (highRisk && touched.some(touchesUi)) reasons.set("browser", "the change touches UI at high risk or above");

  const timeouts = config.checks.timeoutsSeconds;
  const checks = CHECK_IDS.filter((id) => reasons.has(id)).map((id): PlannedCheck => {
    const timeoutSeconds = policy.timeoutSeconds?.[id] ?? (id === "targeted" ? timeouts.unit : timeouts[id]);
    let argv: string[] | null = policy.commands?.[id] ?? null;
    if (!argv && id === "targeted") {
      const tests = targetedTests(touched, testFiles);
      argv = tests
        ? ["node", "--test", ...tests.map((t) => `dist/${t.replace(/\.ts$/, ".js")}`)]
        : DEFAULT_COMMANDS.unit;
    } else if (!argv && id !== "browser") argv = DEFAULT_COMMANDS[id as keyof typeof DEFAULT_COMMANDS];
    return {
      id,
      kind: KIND[id],
      timeoutSeconds,
      argv,
      ...(id === "performance" ? { metric: { name: "p95Ms", below: p95.belowMs } } : {}),
      ...(id === "browser" ? { flow: browserFlowFor(change, touched) } : {}),
      reason: reasons.get(id) ?? "",
    };
  });
  const humanGateReasons = [
    ...(auth ? ["the change touches authorization"] : []),
    ...(policy.humanGateRiskTiers.includes(change.riskTier) ? [`${policy.id} gates ${change.riskTier} risk`] : []),
  ];
  return {
    policyId: policy.id,
    policyVersion: policy.version,
    riskTier: change.riskTier,
    checks,
    humanGate: humanGateReasons.length > 0,
    humanGateReasons,
  };
}
