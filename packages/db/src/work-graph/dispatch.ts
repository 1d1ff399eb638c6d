import type { HandlerResult } from "@rhumbatron/core";
import { commandIds, type GraphTask, planDispatch, type TaskState } from "@rhumbatron/core";
import { appendToOutbox, enqueueCommand } from "@rhumbatron/runtime";
import { intentDeclared } from "../events/claims.ts";
import { type LockedChange, lockResourceRow } from "../events/owners.ts";
import { moveOne, moveTasks } from "../statuses/moves.ts";
import type { TxContext } from "../transaction.ts";
import { agentIdForTask, changeEvent, SYSTEM, type WorkGraphDeps } from "./shared.ts";

export interface LoadedTask extends GraphTask {
  id: string;
  title: string;
  position: number;
  agentId: string | null;
  intents: { paths: string[]; prefixes: string[] };
  attempt: number;
}

export async function loadTasks(ctx: TxContext, changeId: string): Promise<LoadedTask[]> {
  const rows = await ctx.tx.task.findMany({ where: { changeId }, orderBy: { position: "asc" } });
  return rows.map((r) => ({
    id: r.id,
    key: r.key,
    title: r.title,
    position: r.position,
    state: r.state as TaskState,
    dependsOn: r.dependencies,
    dispatched: r.dispatched,
    agentId: r.agentId,
    intents: r.intents as { paths: string[]; prefixes: string[] },
    attempt: r.attempt,
  }));
}

/**
 * change.dispatch (integration queue): marks newly ready Tasks ready (task.ready through the shard
 * outbox) and wakes ready Tasks within the Change's Agent limit (agent.wake, `cmd_<task>_ready`).
 * Each woken Task declares what it intends to touch (intent.declared) before its Agent starts; the
 * first dispatch that wakes any Task writes change.dispatched (one per Change: its ID has no key).
 * Runs under the Change's lock, so two dispatches of one Change never over-fill the slots.
 */
export async function dispatchChange(
  ctx: TxContext,
  changeId: string,
  deps: WorkGraphDeps,
  causedBy: string | null,
): Promise<HandlerResult> {
  const owner: LockedChange = await lockResourceRow(ctx, `change:${changeId}`);
  const change = await ctx.tx.change.findUniqueOrThrow({ where: { id: changeId }, select: { status: true } });
  if (change.status !== "open") return "done";
  const tasks = await loadTasks(ctx, changeId);
  const plan = planDispatch(tasks, deps.config.causal.maxActiveAgentsPerChange);
  const byKey = new Map(tasks.map((t) => [t.key, t]));
  const now = deps.now();
  const events = [];
  for (const key of plan.markReady) {
    const t = byKey.get(key);
    if (!t) continue;
    await moveOne(`task ${t.id}`, "ready", moveTasks(ctx.tx, { id: t.id }, "ready"));
    events.push(
      changeEvent(owner, "task.ready", {
        taskId: t.id,
        attempt: t.attempt,
        actor: SYSTEM,
        causedBy,
        now,
        payload: { key },
      }),
    );
  }
  await appendToOutbox(ctx, events, deps);
  const woken: LoadedTask[] = [];
  for (const key of plan.wake) {
    const t = byKey.get(key);
    if (!t) continue;
    const sent = await enqueueCommand(
      ctx,
      {
        commandId: commandIds.wake(t.id, t.attempt),
        commandType: "agent.wake",
        projectId: owner.projectId,
        changeId,
        taskId: t.id,
        payload: { agentId: agentIdForTask(t.id), reason: "dispatch" },
      },
      deps,
    );
    // A refused wake (daily command cap) leaves the Task ready for a later dispatch.
    if (!sent.sent) continue;
    await ctx.tx.task.update({ where: { id: t.id }, data: { dispatched: true } });
    woken.push(t);
  }
  if (woken.length === 0) return "done";
  const agent = (t: LoadedTask) => agentIdForTask(t.id);
  await appendToOutbox(
    ctx,
    [
      changeEvent(owner, "change.dispatched", {
        actor: SYSTEM,
        causedBy,
        now,
        payload: { readyTaskIds: woken.map((t) => t.id) },
      }),
      ...woken.map((t) => intentDeclared(owner, { ...t, state: "ready" }, agent(t), { causedBy, now })),
    ],
    deps,
  );
  return "done";
}
