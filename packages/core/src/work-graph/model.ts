import { z } from "zod";
import { agentChoiceSchema } from "../agents/choice.ts";
import { PATCH_MAX_BYTES } from "../config.ts";
import { DomainError } from "../errors.ts";
import { repoPathSchema, safeText, utf8Bytes } from "../input.ts";

/**
 * A Change and its Work Graph of Tasks (docs/protocol.md, Changes and the Work Graph). Validated at the
 * edge; `validateWorkGraph` rejects cycles, dangling dependencies and duplicate keys before
 * anything is stored.
 */
export const RISK_TIERS = ["low", "medium", "high", "critical"] as const;
export type RiskTier = (typeof RISK_TIERS)[number];

export const TASK_STATES = ["pending", "ready", "running", "completed", "failed", "blocked"] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** Why a Task is blocked: the limit it hit. */
export const BLOCKED_LIMITS = [
  "dead_letter",
  "sandbox_meter",
  "command_cap",
  "cancelled",
  "agent_unavailable",
] as const;

/**
 * A repository path (`repoPathSchema` in ../input.ts): relative, `/`-separated, no `.`, `..` or empty
 * segments, no drive letter, backslash or control character, never into `.git`. A prefix may end with `/`.
 */
export const repoPath = repoPathSchema;

export const taskKey = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "lowercase letters, digits, '-' and '_', at most 64");

/** One step of a scripted agent's edit plan (the offline agent replays these). */
export const editStep = z.discriminatedUnion("op", [
  z.object({ op: z.literal("write"), path: repoPath, content: safeText(PATCH_MAX_BYTES) }),
  z.object({ op: z.literal("delete"), path: repoPath }),
  z.object({
    op: z.literal("replace"),
    path: repoPath,
    find: safeText(PATCH_MAX_BYTES).min(1),
    replace: safeText(PATCH_MAX_BYTES),
  }),
  /** A command in the Sandbox (on the allowlist); a non-zero exit fails the run. */
  z.object({ op: z.literal("run"), argv: z.array(safeText(4000).min(1)).min(1).max(50) }),
]);
export type EditStep = z.infer<typeof editStep>;

/**
 * The bytes a Task's edit plan adds (written content and replacement text): what its ChangeSet's
 * patch holds at least. A plan that adds more than one patch may hold (512 KB) is refused at create
 * time instead of being cut short after the Agent did the work.
 */
export function editPlanBytes(plan: readonly EditStep[]): number {
  let n = 0;
  for (const step of plan) {
    if (step.op === "write") n += utf8Bytes(step.content);
    if (step.op === "replace") n += utf8Bytes(step.replace);
  }
  return n;
}

export const resourceIntents = z.object({
  paths: z.array(repoPath).max(200).default([]),
  prefixes: z.array(repoPath).max(200).default([]),
});
export type ResourceIntents = z.infer<typeof resourceIntents>;

/**
 * How one attempt of a Task with several is picked (docs/attempts.md): by a person, or by a rule
 * the Task names: the first attempt whose Candidate is verified, or, once every attempt's Candidate
 * has its result, the verified one that changes the fewest lines.
 */
export const ATTEMPT_PICKS = ["person", "first_verified", "fewest_lines"] as const;
export type AttemptPick = (typeof ATTEMPT_PICKS)[number];
export const MAX_ATTEMPTS = 4;

/** Several Agents (or models) working the same Task side by side, each attempt its own run, ChangeSet and Candidate. */
export const taskAttempts = z.strictObject({
  agents: z.array(agentChoiceSchema).min(2, "give at least 2 attempts' Agents").max(MAX_ATTEMPTS),
  pick: z.enum(ATTEMPT_PICKS).default("person"),
});
export type TaskAttempts = z.infer<typeof taskAttempts>;

export const taskInput = z.object({
  key: taskKey,
  title: safeText(200).trim().min(1),
  dependsOn: z.array(taskKey).max(100).default([]),
  intents: resourceIntents.default({ paths: [], prefixes: [] }),
  editPlan: z
    .array(editStep)
    .max(200)
    .refine((plan) => editPlanBytes(plan) <= PATCH_MAX_BYTES, {
      message: `the edit plan writes more than a ChangeSet patch holds (${PATCH_MAX_BYTES} bytes, 512 KB); split the Task`,
    })
    .optional(),
  /** This Task's Agent, instead of the project's default (agents/choice.ts). */
  agent: agentChoiceSchema.optional(),
  /** Attempts with different Agents side by side; the first is the Task's own run (docs/attempts.md). */
  attempts: taskAttempts.optional(),
});
export type TaskInput = z.infer<typeof taskInput>;

const route = safeText(500).regex(/^(GET|POST|PUT|PATCH|DELETE) \/\S*$/, "like 'GET /api/items'");

export const changeInput = z.object({
  title: safeText(200).trim().min(1),
  description: safeText(20_000).default(""),
  riskTier: z.enum(RISK_TIERS),
  goals: z.object({ p95LatencyMs: z.number().int().positive().max(600_000).optional() }).default({}),
  invariants: z.array(safeText(500).trim().min(1)).max(50).default([]),
  contractChanges: z
    .object({
      added: z.array(route).default([]),
      removed: z.array(route).default([]),
      changed: z.array(route).default([]),
    })
    .default({ added: [], removed: [], changed: [] }),
  tasks: z.array(taskInput).min(1).max(100),
});
export type ChangeInput = z.infer<typeof changeInput>;

/**
 * Rejects duplicate keys, dangling or self dependencies, and cycles, naming each problem; and
 * attempts anywhere but on one Task that no other depends on, or beside the Task's own `agent`.
 */
export function validateWorkGraph(
  tasks: readonly { key: string; dependsOn: readonly string[]; agent?: unknown; attempts?: unknown }[],
): void {
  const problems: string[] = [];
  const attempted = tasks.filter((t) => t.attempts !== undefined);
  if (attempted.length > 1)
    problems.push(`only one Task of a Change may ask for attempts (${attempted.map((t) => t.key).join(", ")} do)`);
  for (const t of attempted) {
    if (t.agent !== undefined)
      problems.push(`Task "${t.key}" names an agent and attempts: name its Agents in attempts only`);
    const dependents = tasks.filter((d) => d.dependsOn.includes(t.key)).map((d) => d.key);
    if (dependents.length)
      problems.push(
        `Task "${t.key}" asks for attempts but ${dependents.join(", ")} depend${dependents.length === 1 ? "s" : ""} on it: only a Task nothing depends on may`,
      );
  }
  const keys = new Set<string>();
  for (const t of tasks) {
    if (keys.has(t.key)) problems.push(`duplicate Task key "${t.key}"`);
    keys.add(t.key);
  }
  for (const t of tasks) {
    for (const d of t.dependsOn) {
      if (d === t.key) problems.push(`Task "${t.key}" depends on itself`);
      else if (!keys.has(d)) problems.push(`Task "${t.key}" depends on "${d}", which is not in the Work Graph`);
    }
  }
  if (problems.length === 0) {
    const cycle = findCycle(tasks);
    if (cycle) problems.push(`the Work Graph has a cycle: ${cycle.join(" -> ")}`);
  }
  if (problems.length) throw new DomainError("INVALID_INPUT", problems.join("; "), { problems });
}

function findCycle(tasks: readonly { key: string; dependsOn: readonly string[] }[]): string[] | null {
  const deps = new Map(tasks.map((t) => [t.key, t.dependsOn]));
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const visit = (k: string): string[] | null => {
    if (state.get(k) === "done") return null;
    if (state.get(k) === "visiting") return [...stack.slice(stack.indexOf(k)), k];
    state.set(k, "visiting");
    stack.push(k);
    for (const d of deps.get(k) ?? []) {
      const c = visit(d);
      if (c) return c;
    }
    stack.pop();
    state.set(k, "done");
    return null;
  };
  for (const t of tasks) {
    const c = visit(t.key);
    if (c) return c;
  }
  return null;
}
