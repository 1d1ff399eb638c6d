import { dirForAgentRun, type SandboxWorkspace } from "@rhumbatron/core";
import {
  finishAttempt,
  finishTask,
  markRun,
  runStillHeld,
  runSuperseded,
  type SandboxReservation,
  settleSandbox,
  taskCancelled,
} from "@rhumbatron/db";
import type { RunContext, RunnerDeps, RunResult } from "./run-types.ts";
import { type WakeDelivery, wakeDelivery } from "./wakes.ts";

// The open part of an Agent run (runner.ts): its directory, its cancel watch, and how it ends.

export interface OpenRun {
  ws: SandboxWorkspace;
  cancel: { signal: AbortSignal; stop(): Promise<void> };
  wakes: WakeDelivery;
  /**
   * Settle the meter, remove the run directory, then record the run and finish the Task (or note the
   * cancel). A runner whose run was taken over (packages/db/src/work-graph/run-fence.ts) settles and
   * records nothing: the meter and the records are the taker's. It throws runSuperseded then.
   */
  finish(outcome: "completed" | "failed", detail: string, changeSetId?: string): Promise<RunResult>;
  /** After runSuperseded: stop the watch and remove the run directory, recording nothing. */
  leave(): Promise<void>;
}

/** The run directory, the cancel watch, and how the run ends whatever happens in between. */
export async function openRunStep(
  deps: RunnerDeps,
  runId: string,
  ctx: RunContext,
  reservation: SandboxReservation,
): Promise<OpenRun> {
  const started = deps.now();
  const held = { runId, epoch: ctx.epoch };
  const ws = await deps.sandbox.open({ projectId: ctx.projectId, dirName: dirForAgentRun(runId) });
  const wakes = wakeDelivery(deps, { changeId: ctx.changeId, taskId: ctx.task.taskId });
  const cancel = watchForCancel(deps, ctx.task.taskId, () => wakes.poll());
  const leave = async () => {
    await cancel.stop();
    await ws.remove().catch(() => {});
  };
  const finish: OpenRun["finish"] = async (outcome, detail, changeSetId) => {
    if (!(await runStillHeld(deps.db, held))) {
      await leave();
      throw runSuperseded(held);
    }
    await cancel.stop();
    const wallSeconds = Math.ceil((deps.now().getTime() - started.getTime()) / 1000);
    await settleSandbox(deps.db, reservation, { wallSeconds, billing: deps.sandbox.billing }, deps.config);
    await ws.remove().catch(() => {});
    if (cancel.signal.aborted) {
      // The Change was cancelled under the run: its Task is blocked already; nothing is published.
      await markRun(deps.db, held, "cancelled", "the Change was cancelled", deps.now());
      return { outcome: "skipped", detail: "cancelled: the Change was cancelled while the Agent worked" };
    }
    // The run ends in the transaction that finishes its Task (or its attempt), fenced by its epoch.
    const task = { ...held, taskId: ctx.task.taskId, agentId: ctx.agentId, changeSetId: changeSetId ?? null };
    if (ctx.alternative > 1)
      await finishAttempt(
        deps.db,
        { ...task, changeId: ctx.changeId, attempt: ctx.alternative, outcome, reason: detail },
        deps,
      );
    else await finishTask(deps.db, { ...task, outcome, reason: detail }, deps);
    return { outcome, detail, ...(changeSetId ? { changeSetId } : {}) };
  };
  return { ws, cancel, wakes, finish, leave };
}

/** How often a running Agent checks whether its Change was cancelled, and takes the wakes sent to it. */
const CANCEL_POLL_MS = 1000;

/**
 * Aborts the run's signal once its Task is blocked as cancelled (cancelChange), so the command in
 * flight is killed with its children and the tool loop stops. Each tick also runs `onTick` (taking
 * the Agent's wakes); stop waits for a tick in flight, so nothing is taken after the run ends.
 */
function watchForCancel(
  deps: RunnerDeps,
  taskId: string,
  onTick: () => Promise<void>,
): { signal: AbortSignal; stop(): Promise<void> } {
  const controller = new AbortController();
  let ticking: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    void taskCancelled(deps.db, taskId)
      .then((cancelled) => {
        if (cancelled) controller.abort(new Error("cancelled"));
      })
      .catch(() => {});
    // A failed take leaves the wake queued for the next tick (or the runner).
    ticking = onTick().catch(() => {});
  }, CANCEL_POLL_MS);
  timer.unref();
  return {
    signal: controller.signal,
    stop: async () => {
      clearInterval(timer);
      await ticking;
    },
  };
}
