import { z } from "zod";
import { DomainError } from "../errors.ts";

/**
 * A Change and its Work Graph (spec: a Change becomes a Work Graph of Tasks). Validated at the
 * edge; `validateWorkGraph` rejects cycles, dangling dependencies and duplicate keys before
 * anything is stored.
 */
export const RISK_TIERS = ["low", "medium", "high", "critical"] as const;
export type RiskTier = (typeof RISK_TIERS)[number];

export const TASK_STATES = ["pending", "ready", "running", "completed", "failed", "blocked"] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** Why a Task is blocked: the limit it hit. */
export const BLOCKED_LIMITS = ["dead_letter", "sandbox_meter", "command_cap", "cancelled"] as const;

/** A repository path: relative, `/`-separated, no `..` or empty segments. A prefix may end with `/`. */
export const repoPath = z
  .string()
  .min(1)
  .max(500)
  .refine(
    (p) =>
      !p.startsWith("/") &&
      !p.split("/").some((s, i, all) => s === ".." || s === "." || (s === "" && i < all.length - 1)),
    {
      message: "must be a relative repository path without '..' or empty segments",
    },
  );

export const taskKey = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "lowercase letters, digits, '-' and '_', at most 64");

/** One step of a scripted agent's edit plan (the offline agent replays these). */
export const editStep = z.discriminatedUnion("op", [
  z.object({ op: z.literal("write"), path: repoPath, content: z.string().max(1_000_000) }),
  z.object({ op: z.literal("delete"), path: repoPath }),
  z.object({ op: z.literal("replace"), path: repoPath, find: z.string().min(1), replace: z.string() }),
  /** A command in the Sandbox (on the allowlist); a non-zero exit fails the run. */
  z.object({ op: z.literal("run"), argv: z.array(z.string().min(1)).min(1).max(50) }),
]);
export type EditStep = z.infer<typeof editStep>;

export const resourceIntents = z.object({
  paths: z.array(repoPath).max(200).default([]),
  prefixes: z.array(repoPath).max(200).default([]),
});
export type ResourceIntents = z.infer<typeof resourceIntents>;

export const taskInput = z.object({
  key: taskKey,
  title: z.string().trim().min(1).max(200),
  dependsOn: z.array(taskKey).max(100).default([]),
  intents: resourceIntents.default({ paths: [], prefixes: [] }),
  editPlan: z.array(editStep).max(200).optional(),
});
export type TaskInput = z.infer<typeof taskInput>;

const route = z.string().regex(/^(GET|POST|PUT|PATCH|DELETE) \/\S*$/, "like 'GET /api/cart'");

export const changeInput = z.object({
  title: z.string().trim().min(1).max(200),
  description: z.string().max(20_000).default(""),
  riskTier: z.enum(RISK_TIERS),
  goals: z.object({ p95LatencyMs: z.number().int().positive().max(600_000).optional() }).default({}),
  invariants: z.array(z.string().trim().min(1).max(500)).max(50).default([]),
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

/** Rejects duplicate keys, dangling or self dependencies, and cycles, naming each problem. */
export function validateWorkGraph(tasks: readonly { key: string; dependsOn: readonly string[] }[]): void {
  const problems: string[] = [];
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
