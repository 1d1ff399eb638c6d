import { z } from "zod";
import type { RhumbatronConfig } from "../config.ts";
import { safeText } from "../input.ts";
import { commandRefusal, DEFAULT_COMMAND_ALLOWLIST } from "../sandbox/allowlist.ts";
import { RISK_TIERS, type RiskTier } from "../work-graph/model.ts";
import { checkIdSchema } from "./checks-file.ts";
import { checksForTier, DEFAULT_POLICY, type VerificationPolicy } from "./plan.ts";

/**
 * A project's verification policy as its admins edit it (docs/verification.md, "The project's
 * policy"): each risk tier's required checks, which tiers need a person's
 * approval, per-check commands and timeouts, the rerun budget and the p95 limit. Stored versioned
 * (project_policies); a project that never edited one runs version 1, the defaults below. One
 * schema for the API, the SDK, the CLI and the web form, so each refuses a bad policy with the same
 * words, naming the field.
 */

/** The bounds a policy may set; the verification workflow's lease covers the longest check timeout. */
export const POLICY_BOUNDS = {
  /** A check longer than the Candidate's whole Sandbox reservation (900 s) could never finish within it. */
  timeoutSeconds: { min: 1, max: 900 },
  /** config.checks.rerunsPerCheck's own range. */
  rerunBudget: { min: 0, max: 20 },
  /** One minute: a p95 above that is not a latency goal any check here can measure. */
  p95LimitMs: { min: 1, max: 60_000 },
  argvItems: 50,
  argLength: 1000,
} as const;

/** Refuses a repeated item at its own index, so the message points at the duplicate. */
function noRepeats<T>(what: string) {
  return (items: readonly T[], ctx: z.RefinementCtx) => {
    for (const [i, item] of items.entries()) {
      if (items.indexOf(item) !== i) ctx.addIssue({ code: "custom", path: [i], message: `${what} ${item} twice` });
    }
  };
}

/** Checks a tier requires on top of the project's own; empty: what the checks file says applies. */
const checkList = z.array(checkIdSchema).max(50).superRefine(noRepeats("lists check"));

/** A check command: argv (no shell), its executable from the Sandbox's allowlist, like an Agent's commands. */
const argv = z
  .array(safeText(POLICY_BOUNDS.argLength).min(1, "an argument may not be empty"))
  .min(1, 'give the command as argv, e.g. ["npm", "run", "-s", "build"]')
  .max(POLICY_BOUNDS.argvItems)
  .superRefine((a, ctx) => {
    // An empty argv has its message already (min).
    const refusal = a.length > 0 ? commandRefusal(a, DEFAULT_COMMAND_ALLOWLIST) : null;
    if (refusal) ctx.addIssue({ code: "custom", path: [0], message: refusal });
  });

const seconds = z
  .number()
  .int("whole seconds")
  .min(POLICY_BOUNDS.timeoutSeconds.min)
  .max(POLICY_BOUNDS.timeoutSeconds.max, `at most ${POLICY_BOUNDS.timeoutSeconds.max} s, the Candidate's reservation`);

/** An unknown key is named with the keys this object takes (a misspelt tier or check says what it could be). */
const takes = (what: string, keys: readonly string[]) => ({
  error: (issue: { code?: string; keys?: string[] }) =>
    issue.code === "unrecognized_keys"
      ? `${(issue.keys ?? []).join(", ")} is not ${what}: give one of ${keys.join(", ")}`
      : undefined,
});
const byTier = <T extends z.ZodType>(v: T) =>
  z.strictObject(
    Object.fromEntries(RISK_TIERS.map((t) => [t, v])) as Record<RiskTier, T>,
    takes("a risk tier", RISK_TIERS),
  );
/** Per-check settings, by the id the checks file gives the check. */
const byCheck = <T extends z.ZodType>(v: T) => z.record(checkIdSchema, v);

export const policyDocumentSchema = z.strictObject({
  /** Checks each tier requires besides those the project's checks file applies. */
  requiredChecksByRisk: byTier(checkList),
  humanGateRiskTiers: z.array(z.enum(RISK_TIERS)).superRefine(noRepeats("lists tier")),
  /** Overrides of the checks file's commands; a check not named runs its file's. */
  commands: byCheck(argv),
  /** Overrides of the checks file's timeouts. */
  timeoutSeconds: byCheck(seconds),
  rerunBudget: z.number().int().min(POLICY_BOUNDS.rerunBudget.min).max(POLICY_BOUNDS.rerunBudget.max),
  p95LimitMs: z.number().int().min(POLICY_BOUNDS.p95LimitMs.min).max(POLICY_BOUNDS.p95LimitMs.max),
  /**
   * Flaky tests quarantined by the policy itself (docs/flaky-tests.md): one found flaky on at least
   * `flakyRate` of its last runs, over at least `minRuns`, for `days`. Absent or null: only an admin
   * quarantines. A broken test is never quarantined by this rule.
   */
  autoQuarantine: z
    .strictObject({
      flakyRate: z.number().gt(0).max(1),
      minRuns: z.number().int().min(1).max(1000),
      days: z.number().int().min(1).max(365),
    })
    .nullable()
    .optional(),
});
export type PolicyDocument = z.infer<typeof policyDocumentSchema>;

/** Each problem of a refused document as `field.path: message`, joined, e.g. `timeoutSeconds.build: …`. */
export function policyDocumentProblems(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const path = i.path.map((k, n) => (typeof k === "number" ? `[${k}]` : `${n ? "." : ""}${String(k)}`)).join("");
      return path ? `${path}: ${i.message}` : i.message;
    })
    .join("; ");
}

/**
 * Version 1 of every project: the project's checks file decides which checks apply (no tier
 * requires more), with the configured rerun budget and p95 limit; high and critical risk wait for
 * a person (DEFAULT_POLICY).
 */
export function defaultPolicyDocument(config: RhumbatronConfig): PolicyDocument {
  return canonicalPolicyDocument({
    requiredChecksByRisk: {
      low: checksForTier(DEFAULT_POLICY, "low"),
      medium: checksForTier(DEFAULT_POLICY, "medium"),
      high: checksForTier(DEFAULT_POLICY, "high"),
      critical: checksForTier(DEFAULT_POLICY, "critical"),
    },
    humanGateRiskTiers: [...DEFAULT_POLICY.humanGateRiskTiers],
    commands: {},
    timeoutSeconds: {},
    rerunBudget: config.checks.rerunsPerCheck,
    p95LimitMs: config.checks.defaultP95LimitMs,
  });
}

const inOrder = <T extends string>(order: readonly T[], items: readonly T[]) => order.filter((x) => items.includes(x));

/**
 * The document with its lists and keys in catalogue order (check ids sorted, tiers as
 * RISK_TIERS), so two documents that mean the same are the same text: an edit that changes nothing
 * makes no new version.
 */
export function canonicalPolicyDocument(d: PolicyDocument): PolicyDocument {
  const sortedKeys = <T>(r: Record<string, T>) =>
    Object.fromEntries(
      Object.keys(r)
        .sort()
        .map((k) => [k, r[k] as T]),
    ) as Record<string, T>;
  return {
    requiredChecksByRisk: Object.fromEntries(
      RISK_TIERS.map((t) => [t, [...d.requiredChecksByRisk[t]].sort()]),
    ) as PolicyDocument["requiredChecksByRisk"],
    humanGateRiskTiers: inOrder(RISK_TIERS, d.humanGateRiskTiers),
    commands: sortedKeys(Object.fromEntries(Object.entries(d.commands).map(([k, a]) => [k, [...a]]))),
    timeoutSeconds: sortedKeys(d.timeoutSeconds),
    rerunBudget: d.rerunBudget,
    p95LimitMs: d.p95LimitMs,
    ...(d.autoQuarantine ? { autoQuarantine: { ...d.autoQuarantine } } : {}),
  };
}

/** The top-level fields in which two documents differ (policy.updated names them). */
export function changedPolicyFields(before: PolicyDocument, after: PolicyDocument): (keyof PolicyDocument)[] {
  const a = canonicalPolicyDocument(before);
  const b = canonicalPolicyDocument(after);
  return (Object.keys(b) as (keyof PolicyDocument)[]).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}

/** The policy the plan, the gate, approval and promotion read, at `version` of the project's document. */
export function policyFromDocument(document: PolicyDocument, version: number): VerificationPolicy {
  return {
    id: DEFAULT_POLICY.id,
    version,
    requiredChecksByRisk: document.requiredChecksByRisk,
    humanGateRiskTiers: document.humanGateRiskTiers,
    commands: document.commands,
    timeoutSeconds: document.timeoutSeconds,
    rerunBudget: document.rerunBudget,
    p95LimitMs: document.p95LimitMs,
  };
}
