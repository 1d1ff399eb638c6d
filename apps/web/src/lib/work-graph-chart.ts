import { type BLOCKED_LIMITS, TASK_STATES, type TaskState } from "@rhumbatron/core";
import { mermaidText } from "./mermaid-text.ts";

export interface ChartTask {
  key: string;
  title: string;
  state: TaskState;
  /** Keys of the Tasks this one waits for. */
  dependencies: readonly string[];
  /** The limit a blocked Task hit (core BLOCKED_LIMITS). */
  blockedLimit: string | null;
}

/** One colour set per Task state, shared by the flowchart's classDefs and the page's legend and list. */
export const TASK_STATE_COLORS: Record<TaskState, { fill: string; stroke: string; text: string }> = {
  pending: { fill: "#f1f5f9", stroke: "#94a3b8", text: "#334155" },
  ready: { fill: "#e0f2fe", stroke: "#0284c7", text: "#075985" },
  running: { fill: "#fef3c7", stroke: "#d97706", text: "#92400e" },
  completed: { fill: "#dcfce7", stroke: "#16a34a", text: "#166534" },
  failed: { fill: "#fee2e2", stroke: "#dc2626", text: "#991b1b" },
  blocked: { fill: "#ede9fe", stroke: "#7c3aed", text: "#5b21b6" },
};

/** What a Task's state reads as: a blocked Task names the limit it hit. */
export function taskStateLabel(task: Pick<ChartTask, "state" | "blockedLimit">): string {
  if (task.state === "blocked" && task.blockedLimit) return `blocked: ${task.blockedLimit}`;
  return task.state;
}

/**
 * What each limit means for the person reading the Change, and what to do. The blocked run's own
 * error says the exact cause (which program or secret is missing, which cap was hit); this is the
 * line beside it.
 */
export const BLOCKED_LIMIT_MEANING: Record<(typeof BLOCKED_LIMITS)[number], string> = {
  dead_letter: "Its work failed too many times and was set aside: see Operations, Dead letters, then retry the Task.",
  sandbox_meter: "The Sandbox budget or workspace limit refused its run: raise it on Operations, Meters, or wait.",
  command_cap: "Its Agent ran too many commands for one Task: retry it, or split the Task.",
  cancelled: "Its Change was cancelled.",
  agent_unavailable:
    "Its Agent cannot run on this worker (a program or a secret is missing): do what its run says, then retry the Task.",
};

/** The meaning of a blocked Task's limit; a limit this page does not know yet is named as it is. */
export function blockedMeaning(limit: string | null): string | null {
  if (limit === null) return null;
  return BLOCKED_LIMIT_MEANING[limit as keyof typeof BLOCKED_LIMIT_MEANING] ?? `Blocked by ${limit}.`;
}

/** Node IDs by position: Task keys may hold `-`, which mermaid could read as part of an edge. */
const nodeId = (index: number) => `t${index}`;

/**
 * The Work Graph as a mermaid flowchart: one node per Task (its key, title and state), an edge
 * from each dependency to the Task that waits for it, and a classDef per state for the colours.
 * A dependency on a key that is not in the graph is skipped (the server refuses such graphs).
 */
export function workGraphFlowchart(tasks: readonly ChartTask[]): string {
  const lines = ["flowchart LR"];
  for (const state of TASK_STATES) {
    const c = TASK_STATE_COLORS[state];
    const dash = state === "running" ? ",stroke-dasharray:4 3" : "";
    lines.push(`  classDef ${state} fill:${c.fill},stroke:${c.stroke},color:${c.text},stroke-width:2px${dash}`);
  }
  const index = new Map(tasks.map((t, i) => [t.key, i]));
  tasks.forEach((t, i) => {
    const label = `${mermaidText(t.key, 64)} · ${mermaidText(t.title)}<br/>${mermaidText(taskStateLabel(t))}`;
    lines.push(`  ${nodeId(i)}["${label}"]:::${t.state}`);
  });
  tasks.forEach((t, i) => {
    for (const dep of t.dependencies) {
      const from = index.get(dep);
      if (from !== undefined) lines.push(`  ${nodeId(from)} --> ${nodeId(i)}`);
    }
  });
  return lines.join("\n");
}
