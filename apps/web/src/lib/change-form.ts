import {
  type ChangeInput,
  changeInput,
  DomainError,
  RISK_TIERS,
  type RiskTier,
  validateWorkGraph,
} from "@rhumbatron/core";

/**
 * The "new Change" form's state and its validation. The form edits text (one path or route per
 * line, argv as words); `draftToInput` turns it into the `change.create` input, and `validateDraft`
 * checks it with the same zod schema and Work Graph rules the server applies, so the browser
 * and the server report the same problems at the same fields.
 */
export type StepDraft =
  | { op: "write"; path: string; content: string }
  | { op: "delete"; path: string }
  | { op: "replace"; path: string; find: string; replace: string }
  | { op: "run"; argv: string };

export interface TaskDraft {
  key: string;
  title: string;
  dependsOn: string[];
  /** One repository path per line. */
  paths: string;
  prefixes: string;
  editPlan: StepDraft[];
}

export interface ChangeDraft {
  title: string;
  description: string;
  riskTier: RiskTier;
  /** Milliseconds as typed; empty means no goal. */
  p95LatencyMs: string;
  /** One invariant per line. */
  invariants: string;
  /** One route per line, like `GET /api/items`. */
  added: string;
  removed: string;
  changed: string;
  tasks: TaskDraft[];
}

export { RISK_TIERS };

/** Field key of a problem: the input path joined with dots (`tasks.0.key`), "" for the whole Change. */
export type FieldErrors = Record<string, string[]>;

export const emptyTask = (key = ""): TaskDraft => ({
  key,
  title: "",
  dependsOn: [],
  paths: "",
  prefixes: "",
  editPlan: [],
});

export const emptyDraft = (): ChangeDraft => ({
  title: "",
  description: "",
  riskTier: "medium",
  p95LatencyMs: "",
  invariants: "",
  added: "",
  removed: "",
  changed: "",
  tasks: [emptyTask("task-1")],
});

export const newStep = (op: StepDraft["op"]): StepDraft => {
  switch (op) {
    case "write":
      return { op, path: "", content: "" };
    case "delete":
      return { op, path: "" };
    case "replace":
      return { op, path: "", find: "", replace: "" };
    case "run":
      return { op, argv: "" };
  }
};

const lines = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);

function stepInput(s: StepDraft) {
  return s.op === "run" ? { op: s.op, argv: s.argv.trim().split(/\s+/).filter(Boolean) } : s;
}

/** The raw `change` input the draft stands for (not yet validated). */
export function draftToInput(d: ChangeDraft): unknown {
  const p95 = d.p95LatencyMs.trim();
  return {
    title: d.title,
    description: d.description,
    riskTier: d.riskTier,
    goals: p95 === "" ? {} : { p95LatencyMs: Number(p95) },
    invariants: lines(d.invariants),
    contractChanges: { added: lines(d.added), removed: lines(d.removed), changed: lines(d.changed) },
    tasks: d.tasks.map((t) => ({
      key: t.key.trim(),
      title: t.title,
      dependsOn: t.dependsOn,
      intents: { paths: lines(t.paths), prefixes: lines(t.prefixes) },
      ...(t.editPlan.length > 0 ? { editPlan: t.editPlan.map(stepInput) } : {}),
    })),
  };
}

function add(errors: FieldErrors, key: string, message: string) {
  const list = errors[key] ?? [];
  if (!list.includes(message)) list.push(message);
  errors[key] = list;
}

/** Zod issues as field errors; `prefix` is dropped from each path (the server's input nests the Change under `change`). */
export function fieldErrorsOf(
  issues: readonly { path: readonly PropertyKey[]; message: string }[],
  prefix: readonly PropertyKey[] = [],
): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of issues) {
    const inside = prefix.every((p, i) => issue.path[i] === p);
    const path = inside ? issue.path.slice(prefix.length) : issue.path;
    add(errors, path.map(String).join("."), issue.message);
  }
  return errors;
}

/** Checks the draft exactly as `change.create` will: the core zod schema, then the Work Graph rules. */
export function validateDraft(d: ChangeDraft): { ok: true; input: ChangeInput } | { ok: false; errors: FieldErrors } {
  const parsed = changeInput.safeParse(draftToInput(d));
  if (!parsed.success) return { ok: false, errors: fieldErrorsOf(parsed.error.issues) };
  try {
    validateWorkGraph(parsed.data.tasks);
  } catch (err) {
    const problems =
      err instanceof DomainError ? ((err.details?.problems as string[] | undefined) ?? [err.message]) : [String(err)];
    const errors: FieldErrors = {};
    for (const p of problems) add(errors, "tasks", p);
    return { ok: false, errors };
  }
  return { ok: true, input: parsed.data };
}

/** Renames a Task and every dependency that named its old key. */
export function renameTask(d: ChangeDraft, index: number, key: string): ChangeDraft {
  const old = d.tasks[index]?.key;
  return {
    ...d,
    tasks: d.tasks.map((t, i) =>
      i === index ? { ...t, key } : { ...t, dependsOn: t.dependsOn.map((dep) => (dep === old ? key : dep)) },
    ),
  };
}

/** Removes a Task and every dependency on it. */
export function removeTask(d: ChangeDraft, index: number): ChangeDraft {
  const gone = d.tasks[index]?.key;
  return {
    ...d,
    tasks: d.tasks
      .filter((_, i) => i !== index)
      .map((t) => ({ ...t, dependsOn: t.dependsOn.filter((k) => k !== gone) })),
  };
}

/** A key not yet used by any Task of the draft. */
export function freshTaskKey(d: ChangeDraft): string {
  let n = d.tasks.length + 1;
  while (d.tasks.some((t) => t.key === `task-${n}`)) n++;
  return `task-${n}`;
}
