import picomatch from "picomatch";
import type { RhumbatronConfig } from "../config.ts";
import { DEFAULT_COMMAND_ALLOWLIST } from "../sandbox/allowlist.ts";
import { RISK_TIERS, type RiskTier } from "../work-graph/model.ts";
import {
  allowedTools,
  type BrowserStep,
  type CheckRule,
  type ChecksFile,
  DEFAULT_CHECK_TIMEOUT_SECONDS,
  type DeclaredCheck,
  GATE_FOLDER,
} from "./checks-file.ts";

/**
 * The Verification Plan: which checks a Candidate must pass. The checks are the project's own,
 * declared in its checks file at the Candidate's base (checks-file.ts) or, without one, detected
 * from the repository (detect-checks.ts); each applies by its `when` rules to the Change's risk tier,
 * what its ChangeSets touch, its invariants and goals. The policy may require more by tier.
 */
/** A check's id, as its checks file names it (checkIdSchema). */
export type CheckId = string;
/**
 * What a check is, from how its file declares it: the check that prepares the tree (`build`), a
 * test run with a report (`unit`), a metric below a limit (`performance`), one of Rhumbatron's
 * procedures (`contract`, `browser`), or a command judged by its exit code (`command`).
 */
export type CheckKind = "build" | "unit" | "contract" | "performance" | "browser" | "command";

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
  /** Overrides of the checks file's timeouts, by check. */
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

/**
 * The policy every project starts with: it requires nothing beyond what the project's checks file
 * says applies, and high and critical risk wait for a person.
 */
export const DEFAULT_POLICY: VerificationPolicy = {
  id: "policy-1",
  version: 1,
  requiredChecksByRisk: {},
  humanGateRiskTiers: ["high", "critical"],
};

/** Where a plan's checks come from: the base's checks file, or detected (no file at the base). */
export type ChecksSource =
  | { kind: "file"; path: string; commit: string }
  | {
      kind: "detected";
      commit: string;
      reasons: string[] /** The proposed file's blob (sourceKeys.proposedChecks). */;
      proposalKey: string;
    };

/** A project's checks as the plan reads them: the file's (or the detected) declarations and where from. */
export interface ProjectChecks {
  source: ChecksSource;
  file: ChecksFile;
}

export interface PlannedCheck {
  id: CheckId;
  kind: CheckKind;
  timeoutSeconds: number;
  /** The command; null when the policy requires a check the checks file does not declare. */
  argv: string[] | null;
  /** A metric the check must report below a bound (the last JSON object it prints). */
  metric?: { name: string; below: number };
  /** The test report that decides it: at least one test must run. */
  report?: { format: "junit" | "tap"; path?: string };
  procedure?: "contract" | "browser" | "playwright";
  /** A browser check's steps. */
  steps?: BrowserStep[];
  /** A playwright check's test folder. */
  tests?: string;
  /** Every other check starts from the tree this one leaves. */
  prepares?: boolean;
  /** The related-tests command runs instead of the whole suite. */
  related?: boolean;
  /** The policy requires it; the checks file declares no such check (a gap, never skipped). */
  undeclared?: boolean;
  /** Programs the command may start besides the Sandbox's allowlist: the tools the file requires. */
  tools?: string[];
  reason: string;
}

export interface VerificationPlan {
  policyId: string;
  policyVersion: number;
  riskTier: RiskTier;
  checks: PlannedCheck[];
  humanGate: boolean;
  humanGateReasons: string[];
  /** Absent on plans made before projects declared their checks. */
  checksSource?: ChecksSource;
  /** What the project needs on the host (`node>=20`, `pytest`). */
  requires?: string[];
  /** The Change's paths under .rhumbatron/: it edits the gate, which applies from the next generation. */
  editsTheGate?: string[];
}

export interface PlanInput {
  riskTier: RiskTier;
  invariants: readonly string[];
  goals: { p95LatencyMs?: number | undefined };
}

const names = (re: RegExp) => (p: string) => re.test(p);
export const touchesAuthorization = names(/(^|\/)(auth|authz|authorization|permissions?|roles?)([./_-]|$)/i);

/** The tier's checks the policy requires on top of the project's own (strictest listed tier at or above). */
export function checksForTier(policy: VerificationPolicy, tier: RiskTier): CheckId[] {
  const rank = RISK_TIERS.indexOf(tier);
  const listed = RISK_TIERS.filter((t) => policy.requiredChecksByRisk[t]?.length);
  const atOrAbove = listed.filter((t) => RISK_TIERS.indexOf(t) >= rank);
  const use = policy.requiredChecksByRisk[tier]?.length ? tier : atOrAbove[0];
  return use ? [...(policy.requiredChecksByRisk[use] ?? [])] : [];
}

/**
 * `targeted` of an Agent's context (context/packet.ts): the test files whose name starts with a
 * touched source file's name (src/parse.ts -> test/parse.test.ts) plus touched tests; null when none.
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

/** Why a rule holds for this Change, or null when it does not. */
function ruleHolds(rule: CheckRule, change: PlanInput, touched: readonly string[]): string | null {
  const why: string[] = [];
  if (rule.tiers) {
    if (!rule.tiers.includes(change.riskTier)) return null;
    why.push(`${change.riskTier} risk`);
  }
  if (rule.paths) {
    const match = picomatch(rule.paths, { dot: true });
    const hit = touched.find((p) => match(p));
    if (!hit) return null;
    why.push(`${hit} matches ${rule.paths.join(", ")}`);
  }
  if (rule.invariant) {
    const word = new RegExp(`\\b${rule.invariant.replace(/[-]/g, "\\-")}\\b`, "i");
    if (!change.invariants.some((i) => word.test(i))) return null;
    why.push(`an invariant names ${rule.invariant}`);
  }
  if (rule.goal) {
    if (change.goals.p95LatencyMs === undefined) return null;
    why.push("the Change sets a p95 goal");
  }
  return why.join(", ") || "every Change";
}

function kindOf(c: DeclaredCheck): CheckKind {
  if (c.procedure) return c.procedure === "playwright" ? "browser" : c.procedure;
  if (c.prepares) return "build";
  if (c.metric) return "performance";
  if (c.report) return "unit";
  return "command";
}

/** The paths under .rhumbatron/ a Change touches: it changes the gate that judges Changes. */
export const gatePaths = (touched: readonly string[]) => touched.filter((p) => p.startsWith(GATE_FOLDER));

export function buildVerificationPlan(
  change: PlanInput,
  touched: readonly string[],
  policy: VerificationPolicy,
  config: RhumbatronConfig,
  project: ProjectChecks,
): VerificationPlan {
  const declared = new Map(project.file.checks.map((c) => [c.id, c]));
  const from = project.source.kind === "file" ? project.source.path : "the detected checks";
  const reasons = new Map<CheckId, string>();
  for (const c of project.file.checks) {
    const why = c.when ? c.when.map((r) => ruleHolds(r, change, touched)).find((w) => w !== null) : "every Change";
    if (why) reasons.set(c.id, `${from}: ${why}`);
  }
  for (const id of checksForTier(policy, change.riskTier)) {
    if (!reasons.has(id)) reasons.set(id, `required for ${change.riskTier} risk by ${policy.id}`);
  }
  const p95 = p95Bound(change.goals.p95LatencyMs, policy, config);
  const tools = allowedTools(project.file.requires ?? []).filter((t) => !DEFAULT_COMMAND_ALLOWLIST.includes(t));
  const checks = [...reasons.keys()].map((id): PlannedCheck => {
    const reason = reasons.get(id) ?? "";
    const c = declared.get(id);
    const timeoutSeconds = policy.timeoutSeconds?.[id] ?? c?.timeout ?? DEFAULT_CHECK_TIMEOUT_SECONDS;
    if (!c) {
      return {
        id,
        kind: "command",
        timeoutSeconds,
        argv: null,
        undeclared: true,
        reason: `${reason}, but ${from} declares no check ${id}`,
      };
    }
    const related = c.related && touched.length > 0 && !policy.commands?.[id];
    const argv = related
      ? (c.related ?? []).flatMap((a) => (a === "{files}" ? [...touched] : [a]))
      : (policy.commands?.[id] ?? c.run ?? null);
    // A metric without its own limit is the policy's p95 limit, tightened (never loosened) by a goal.
    const below = c.metric ? (c.metric.below === undefined ? p95.belowMs : Math.min(c.metric.below, p95.belowMs)) : 0;
    const why = c.metric ? `${reason}; ${c.metric.below === undefined ? p95.reason : `below ${below}`}` : reason;
    return {
      id,
      kind: kindOf(c),
      timeoutSeconds,
      argv,
      ...(c.metric ? { metric: { name: c.metric.name, below } } : {}),
      ...(c.report ? { report: c.report } : {}),
      ...(c.procedure ? { procedure: c.procedure } : {}),
      ...(c.steps ? { steps: c.steps } : {}),
      ...(c.tests ? { tests: c.tests } : {}),
      ...(c.prepares ? { prepares: true } : {}),
      ...(related ? { related: true } : {}),
      ...(tools.length ? { tools } : {}),
      reason: related ? `${why}; only the tests related to ${touched.length} changed file(s)` : why,
    };
  });
  // The check that prepares the tree runs first (check-pool.ts); the rest keep the file's order.
  checks.sort((a, b) => Number(Boolean(b.prepares)) - Number(Boolean(a.prepares)));
  const auth = touched.some(touchesAuthorization);
  const gate = gatePaths(touched);
  const humanGateReasons = [
    ...(auth ? ["the change touches authorization"] : []),
    ...(gate.length
      ? [`the change edits the project's gate (${gate.join(", ")}); it applies from the next generation`]
      : []),
    ...(policy.humanGateRiskTiers.includes(change.riskTier) ? [`${policy.id} gates ${change.riskTier} risk`] : []),
  ];
  return {
    policyId: policy.id,
    policyVersion: policy.version,
    riskTier: change.riskTier,
    checks,
    humanGate: humanGateReasons.length > 0,
    humanGateReasons,
    checksSource: project.source,
    requires: project.file.requires ?? [],
    editsTheGate: gate,
  };
}
