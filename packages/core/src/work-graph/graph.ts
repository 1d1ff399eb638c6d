import type { TaskState } from "./model.ts";

/** What the graph functions need of a Task. */
export interface GraphTask {
  key: string;
  state: TaskState;
  dependsOn: readonly string[];
  /** A wake was sent and the Task counts as holding an Agent slot until it finishes. */
  dispatched?: boolean;
}

/** Pending Tasks whose dependencies have all completed: they become ready now. */
export function newlyReadyTasks(tasks: readonly GraphTask[]): string[] {
  const done = new Set(tasks.filter((t) => t.state === "completed").map((t) => t.key));
  return tasks.filter((t) => t.state === "pending" && t.dependsOn.every((d) => done.has(d))).map((t) => t.key);
}

/**
 * Dependencies first; among Tasks free at the same time, their order in the Work Graph. This is the
 * order ChangeSets are composed in.
 */
export function topologicalOrder(tasks: readonly Pick<GraphTask, "key" | "dependsOn">[]): string[] {
  const order: string[] = [];
  const placed = new Set<string>();
  while (order.length < tasks.length) {
    const next = tasks.find((t) => !placed.has(t.key) && t.dependsOn.every((d) => placed.has(d)));
    if (!next) throw new Error("topologicalOrder: the graph has a cycle (validate it first)");
    order.push(next.key);
    placed.add(next.key);
  }
  return order;
}

export function isGraphComplete(tasks: readonly GraphTask[]): boolean {
  return tasks.length > 0 && tasks.every((t) => t.state === "completed");
}

/** Tasks that hold an Agent slot: running, or ready with a wake already sent. */
export function activeAgentCount(tasks: readonly GraphTask[]): number {
  return tasks.filter((t) => t.state === "running" || (t.state === "ready" && t.dispatched)).length;
}

export interface DispatchPlan {
  /** Pending Tasks to mark ready (task.ready). */
  markReady: string[];
  /** Ready Tasks to wake now (agent.wake), within the free Agent slots. */
  wake: string[];
  /** Ready Tasks left waiting because every slot is taken. */
  waiting: string[];
}

/** change.dispatch: at most `maxActiveAgents` (8) active Agents per Change (docs/protocol.md, Tasks and Agent runs). */
export function planDispatch(tasks: readonly GraphTask[], maxActiveAgents: number): DispatchPlan {
  const markReady = newlyReadyTasks(tasks);
  const readySet = new Set(markReady);
  const candidates = tasks
    .filter((t) => (t.state === "ready" && !t.dispatched) || readySet.has(t.key))
    .map((t) => t.key);
  const free = Math.max(0, maxActiveAgents - activeAgentCount(tasks));
  return { markReady, wake: candidates.slice(0, free), waiting: candidates.slice(free) };
}
