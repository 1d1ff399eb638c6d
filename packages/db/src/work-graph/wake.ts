import { randomUUID } from "node:crypto";
import { type HandlerResult, resourceOverlap } from "@rhumbatron/core";
import type { HandlerContext } from "@rhumbatron/runtime";
import { appendToOutbox } from "@rhumbatron/runtime";
import { claimAcquired } from "../events/claims.ts";
import { type LockedChange, lockResourceRow } from "../events/owners.ts";
import { moveOne, moveTasks } from "../statuses/moves.ts";
import { queueAttemptRuns } from "./attempts.ts";
import { changeEvent, nudgeAgentRunners, type WorkGraphDeps } from "./shared.ts";

/**
 * agent.wake (agent-wakeups queue). The wake is checked again before anything runs: a dispatch
 * wake needs the Task still ready and waiting for this Agent; an overlap wake needs the Agent still
 * holding the Task and the overlap to still hold. A stale wake ends at once as a false wakeup. A
 * wake for a Task this Agent already holds is a duplicate. A relevant wake records a queued run
 * (the run executes with the agent adapters): a dispatch wake's run does the Task, and the Agent
 * takes the Task with its claim (claim.acquired); an overlap or canonical wake's run carries the
 * wake to the Agent's running work, which checks it once more (docs/agents.md, Intents, claims and
 * challenges) and writes agent.woken, so such a wake is counted as a wakeup (or a false one) there.
 */
export type WakeOutcome = "started" | "resumed" | "duplicate" | "stale";

export async function handleWake(
  ctx: HandlerContext,
  deps: WorkGraphDeps,
): Promise<{ outcome: WakeOutcome; result: HandlerResult }> {
  const { command } = ctx;
  const agentId = String(command.payload.agentId ?? "");
  if (!command.changeId || !command.taskId || !agentId)
    return { outcome: "stale", result: await falseWakeup(ctx, deps, "incomplete wake") };
  const owner = await lockResourceRow(ctx, `change:${command.changeId}`);
  const task = await ctx.tx.task.findUnique({ where: { id: command.taskId } });
  if (!task) return { outcome: "stale", result: await falseWakeup(ctx, deps, "task gone") };
  const wake: Wake = { ctx, deps, owner, task, agentId, reason: String(command.payload.reason ?? "") };
  return wake.reason === "dispatch" ? dispatchWake(wake) : resumeWake(wake);
}

interface Wake {
  ctx: HandlerContext;
  deps: WorkGraphDeps;
  owner: LockedChange;
  task: NonNullable<Awaited<ReturnType<HandlerContext["tx"]["task"]["findUnique"]>>>;
  agentId: string;
  reason: string;
}

/** A dispatch wake: the ready Task starts (running, held by the Agent) with a queued run and task.started. */
async function dispatchWake(w: Wake): Promise<{ outcome: WakeOutcome; result: HandlerResult }> {
  const { ctx, deps, owner, task, agentId } = w;
  if (task.state === "running" && task.agentId === agentId) return { outcome: "duplicate", result: "done" };
  if (task.state !== "ready" || !task.dispatched)
    return { outcome: "stale", result: await falseWakeup(ctx, deps, `task is ${task.state}`) };
  const runId = `run_${randomUUID()}`;
  await moveOne(`task ${task.id}`, "running", moveTasks(ctx.tx, { id: task.id }, "running", { data: { agentId } }));
  await queueRun(w, runId);
  // A Task that asked for attempts starts them beside its own run (./attempts.ts).
  await queueAttemptRuns(ctx, { task, agentId, commandId: ctx.command.commandId }, deps);
  const now = deps.now();
  await appendToOutbox(
    ctx,
    [
      changeEvent(owner, "task.started", {
        taskId: task.id,
        attempt: task.attempt,
        actor: { kind: "agent", id: agentId },
        causedBy: ctx.command.commandId,
        now,
        payload: { agentId, runId },
      }),
      claimAcquired(owner, task, agentId, { causedBy: ctx.command.commandId, now }),
    ],
    deps,
  );
  await wakeMetric(w);
  return { outcome: "started", result: "done" };
}

/** An overlap or canonical wake: the Agent must still hold the Task, and the overlap still hold. */
async function resumeWake(w: Wake): Promise<{ outcome: WakeOutcome; result: HandlerResult }> {
  const { ctx, deps, task, agentId } = w;
  const { command } = ctx;
  if (task.state !== "running" || task.agentId !== agentId)
    return { outcome: "stale", result: await falseWakeup(ctx, deps, "agent no longer holds the task") };
  const paths = Array.isArray(command.payload.eventPaths) ? (command.payload.eventPaths as string[]) : null;
  if (paths) {
    const intents = task.intents as { paths: string[]; prefixes: string[] };
    if (resourceOverlap(paths, intents).kind === "none")
      return { outcome: "stale", result: await falseWakeup(ctx, deps, "overlap no longer holds") };
  }
  const existing = await ctx.tx.agentRun.findUnique({ where: { wakeCommandId: command.commandId } });
  if (existing) return { outcome: "duplicate", result: "done" };
  const p = command.payload;
  await queueRun(w, `run_${randomUUID()}`, {
    causeEventId: p.causeEventId ?? null,
    causeType: p.causeType ?? null,
    causeTaskId: p.causeTaskId ?? null,
    eventPaths: paths ?? [],
    overlapping: Array.isArray(p.overlapping) ? p.overlapping : [],
  });
  return { outcome: "resumed", result: "done" };
}

/**
 * A queued Agent run for the wake (its command ID is the run's unique key); the runner picks it up
 * on commit, or the Agent's running work takes it first (`wake` says what woke it).
 */
async function queueRun(w: Wake, runId: string, wake?: Record<string, unknown>) {
  const { ctx, owner, task, agentId, reason } = w;
  await ctx.tx.agentRun.create({
    data: {
      id: runId,
      taskId: task.id,
      changeId: owner.id,
      agentId,
      wakeCommandId: ctx.command.commandId,
      reason,
      ...(wake ? { wake: wake as object } : {}),
    },
  });
  await nudgeAgentRunners(ctx, w.deps);
}

async function wakeMetric(w: Wake) {
  await w.ctx.tx.metricPoint.createMany({
    data: [
      {
        dataset: w.deps.config.eventRouter.metricsDataset,
        name: "agent_wakeup",
        eventId: `wake_${w.ctx.command.commandId}`,
        tenantId: w.owner.tenantId,
        projectId: w.owner.projectId,
        occurredAt: w.deps.now(),
      },
    ],
    skipDuplicates: true,
  });
}

async function falseWakeup(ctx: HandlerContext, deps: WorkGraphDeps, why: string): Promise<HandlerResult> {
  const project = await ctx.tx.project.findUnique({ where: { id: ctx.command.projectId }, select: { tenantId: true } });
  await ctx.tx.metricPoint.createMany({
    data: [
      {
        dataset: deps.config.eventRouter.metricsDataset,
        name: "agent_false_wakeup",
        eventId: `wake_${ctx.command.commandId}`,
        tenantId: project?.tenantId ?? "unknown",
        projectId: ctx.command.projectId,
        occurredAt: deps.now(),
      },
    ],
    skipDuplicates: true,
  });
  deps.log?.({ commandId: ctx.command.commandId, why }, "stale wake ended as a false wakeup");
  return "done";
}
