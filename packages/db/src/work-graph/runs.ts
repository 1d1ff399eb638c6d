import { randomUUID } from "node:crypto";
import {
  type AgentChoice,
  type AgentTask,
  DomainError,
  type EditStep,
  storedAgentChoice,
  topologicalOrder,
} from "@rhumbatron/core";
import { appendToOutbox, claimWhileWorking, heldByDeadWorker, orphanedBy, takeoverCutoff } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { claimReleased } from "../events/claims.ts";
import { lockResourceRow } from "../events/owners.ts";
import { moveRuns, moveTasks } from "../statuses/moves.ts";
import { withTransaction } from "../transaction.ts";
import { type ChangeSetRow, insertChangeSet } from "./changeset-row.ts";
import { fenceRun, type HeldRun, runStillHeld, runSuperseded, UNCLAIMED_EPOCH, updateHeldRun } from "./run-fence.ts";
import { changeEvent, type WorkGraphDeps } from "./shared.ts";

/**
 * Agent runs in the database: the runner claims a queued run (or one whose runner died: its
 * heartbeat stopped for worker.takeoverSeconds, or it has not touched the run for `staleAfterMs`;
 * or one the claiming runner itself holds but no longer works on, see leases/working.ts), records
 * where it started, and publishes its ChangeSet. The caller calls doneWorking(runner, "agent_run",
 * [id], now) when it is done with the run, however it ended. Each claim starts a new epoch of the
 * run, and every write of the runner is fenced with the epoch it claimed in (./run-fence.ts).
 */
export interface RunClaim {
  now: Date;
  /** The claiming worker (worker_heartbeats.worker_id). */
  runner: string;
  staleAfterMs: number;
  takeoverSeconds: number;
}

/**
 * Claims the next run, in a new epoch. A running run is taken over only when this runner does not
 * work on it itself (it is not among `busy`): two lanes of one worker never execute one run at once.
 */
export async function claimNextRun(db: Db, claim: RunClaim): Promise<string | null> {
  const { now } = claim;
  const stale = new Date(now.getTime() - claim.staleAfterMs);
  const deadRunner = heldByDeadWorker("runner_id", takeoverCutoff(now, claim.takeoverSeconds), claim.runner);
  const held = await claimWhileWorking(
    claim.runner,
    "agent_run",
    { now, holdMs: claim.takeoverSeconds * 1000 },
    async (busy) => {
      const orphan = orphanedBy("runner_id", "id", claim.runner, busy);
      const rows = await db.$queryRaw<{ id: string; runner_epoch: number }[]>`
        UPDATE agent_runs SET status = 'running', runner_id = ${claim.runner}, updated_at = ${now},
          runner_epoch = runner_epoch + 1
        WHERE id = (
          SELECT id FROM agent_runs
          WHERE status = 'queued' OR (status = 'running' AND NOT (id = ANY(${busy}::text[]))
            AND (updated_at < ${stale} OR ${deadRunner} OR ${orphan}))
          ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING id, runner_epoch`;
      const row = rows[0];
      return row ? { runId: row.id, epoch: row.runner_epoch } : null;
    },
    (run) => (run ? [run.runId] : []),
  );
  if (!held) return null;
  claimedHere.set(held.runId, held.epoch);
  return held.runId;
}

/**
 * The epoch of each run this process claimed and has not loaded yet. The runner loads the run it
 * claimed at once (loadRunContext), and takes the epoch from here, not from the row: had another
 * worker taken the run over in between, the row would hold that worker's epoch.
 */
const claimedHere = new Map<string, number>();

export interface RunContext {
  runId: string;
  /** The epoch this runner claimed the run in: every write of the run carries it (./run-fence.ts). */
  epoch: number;
  agentId: string;
  reason: string;
  tenantId: string;
  projectId: string;
  changeId: string;
  task: AgentTask;
  taskState: string;
  /** The ChangeSets of the Tasks this one depends on, in Work Graph order (stacked before work), with the paths each changed. */
  stack: { changeSetId: string; taskKey: string; fork: string; baseCommit: string; commit: string; paths: string[] }[];
  /** Set when a previous attempt of this run already recorded its start (restore after a loss). */
  startCommit: string | null;
  /** The project's own command allowlist; empty means the default. */
  commandAllowlist: string[];
  /** The attempt's own Agent, else the Task's, else the project's default; null: the worker's default. */
  agent: AgentChoice | null;
  /** Which attempt of its Task the run is: 1 is the Task's own run; 2… run beside it (./attempts.ts). */
  alternative: number;
}

/**
 * The newest ChangeSet of every Task that `taskKey` depends on (directly or not), in Work Graph
 * order: what a Task's work starts from, stacked on its base (an Agent run, a person's fixture).
 */
export async function dependencyStack(db: Db, changeId: string, taskKey: string): Promise<RunContext["stack"]> {
  const tasks = await db.task.findMany({ where: { changeId }, orderBy: { position: "asc" } });
  const byKey = new Map(tasks.map((t) => [t.key, t]));
  const needed = new Set<string>();
  const collect = (key: string) => {
    for (const d of byKey.get(key)?.dependencies ?? []) {
      if (!needed.has(d)) {
        needed.add(d);
        collect(d);
      }
    }
  };
  collect(taskKey);
  const order = topologicalOrder(tasks.map((t) => ({ key: t.key, dependsOn: t.dependencies }))).filter((k) =>
    needed.has(k),
  );
  const changeSets = await db.changeSet.findMany({
    where: { taskId: { in: order.map((k) => byKey.get(k)?.id ?? "") } },
    orderBy: { createdAt: "desc" },
  });
  return order.flatMap((k) => {
    const cs = changeSets.find((c) => c.taskId === byKey.get(k)?.id);
    return cs
      ? [
          {
            changeSetId: cs.id,
            taskKey: k,
            fork: cs.fork,
            baseCommit: cs.baseCommit,
            commit: cs.commit,
            paths: cs.paths,
          },
        ]
      : [];
  });
}

export async function loadRunContext(db: Db, runId: string): Promise<RunContext> {
  const run = await db.agentRun.findUnique({
    where: { id: runId },
    include: { task: true, change: { include: { project: true } } },
  });
  if (!run) throw new DomainError("NOT_FOUND", `run ${runId} not found`);
  const stack = await dependencyStack(db, run.changeId, run.task.key);
  const epoch = claimedHere.get(runId) ?? run.runnerEpoch;
  claimedHere.delete(runId);
  return {
    runId,
    epoch,
    agentId: run.agentId,
    reason: run.reason,
    tenantId: run.change.project.tenantId,
    projectId: run.change.projectId,
    changeId: run.changeId,
    taskState: run.task.state,
    startCommit: run.startCommit,
    commandAllowlist: run.change.project.commandAllowlist,
    agent:
      storedAgentChoice(run.agent) ?? storedAgentChoice(run.task.agent) ?? storedAgentChoice(run.change.project.agent),
    alternative: run.alternative,
    stack,
    task: {
      taskId: run.task.id,
      key: run.task.key,
      title: run.task.title,
      changeTitle: run.change.title,
      changeDescription: run.change.description,
      intents: run.task.intents as AgentTask["intents"],
      editPlan: (run.task.editPlan as EditStep[] | null) ?? null,
    },
  };
}

export async function recordRunStart(
  db: Db,
  run: HeldRun,
  fork: string,
  startCommit: string,
  now: Date,
): Promise<void> {
  await updateHeldRun(db, run, { fork, startCommit, updatedAt: now });
}

/**
 * Ends a run that ends without its Task moving (skipped, cancelled); finishTask and finishAttempt end
 * the runs that finish their work. Nothing moves for a runner whose run was taken over.
 */
export async function markRun(
  db: Db,
  run: HeldRun,
  status: "failed" | "cancelled",
  error: string | null,
  now: Date,
): Promise<void> {
  const moved = await moveRuns(db, { id: run.runId, runnerEpoch: run.epoch }, status, {
    data: { error, updatedAt: now },
  });
  if (moved === 0 && !(await runStillHeld(db, run))) throw runSuperseded(run);
}

/** What a program Agent's run reported, beside its steps in the blob store (`key`). */
export interface RunTranscript {
  key: string;
  program: string;
  version: string;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  /** host:port asked for through the run's proxy, let through or refused. */
  reached: string[];
  refused: string[];
}

export async function recordRunTranscript(db: Db, run: HeldRun, t: RunTranscript, now: Date): Promise<void> {
  await updateHeldRun(db, run, { transcript: { ...t }, updatedAt: now });
}

/**
 * Records the run's ChangeSet and writes changeset.published through the shard outbox, while the
 * runner still holds the run (`epoch`, ./run-fence.ts). Idempotent per run (a retried publish finds
 * the first ChangeSet).
 */
export async function publishChangeSet(
  db: Db,
  p: Omit<ChangeSetRow, "id" | "alternative"> & { changeSetId?: string; epoch: number },
  deps: WorkGraphDeps,
): Promise<string> {
  return withTransaction(db, async (ctx) => {
    const owner = await lockResourceRow(ctx, `change:${p.changeId}`);
    await fenceRun(ctx.tx, { runId: p.runId, epoch: p.epoch }, deps.now());
    const existing = await ctx.tx.changeSet.findUnique({ where: { runId: p.runId } });
    if (existing) return existing.id;
    // A retried Task's ChangeSet is news of its own (its Event ID is keyed by the attempt).
    const { attempt } = await ctx.tx.task.findUniqueOrThrow({ where: { id: p.taskId }, select: { attempt: true } });
    const { alternative } = await ctx.tx.agentRun.findUniqueOrThrow({
      where: { id: p.runId },
      select: { alternative: true },
    });
    const id = p.changeSetId ?? `cs_${randomUUID()}`;
    await insertChangeSet(ctx.tx, { ...p, id, alternative });
    // Another attempt's ChangeSet is no news for the other Tasks (it wakes none): attempt.finished tells of it.
    if (alternative > 1) return id;
    await appendToOutbox(
      ctx,
      [
        changeEvent(owner, "changeset.published", {
          taskId: p.taskId,
          attempt,
          actor: { kind: "agent", id: p.agentId },
          now: deps.now(),
          payload: { changeSetId: id, agentId: p.agentId, paths: p.paths, patchRef: p.patch?.key ?? null },
        }),
      ],
      deps,
    );
    return id;
  });
}

/**
 * A Sandbox refusal blocks the Task with the limit it hit (blocked_limit `sandbox_meter`) and
 * the guard that refused (`cause`, the refusal's `limit`): a Task the monthly budget refused
 * (`sandbox_monthly_seconds`) resumes by itself once the budget has room (sandbox/resume.ts).
 */
export async function blockTaskForLimit(
  db: Db,
  b: {
    changeId: string;
    taskId: string;
    runId: string;
    /** The runner's epoch (./run-fence.ts); none: a run no runner claimed. */
    epoch?: number;
    limit: string;
    cause?: string | null;
    reason: string;
  },
  deps: WorkGraphDeps,
) {
  await withTransaction(db, async (ctx) => {
    const owner = await lockResourceRow(ctx, `change:${b.changeId}`);
    await fenceRun(ctx.tx, { runId: b.runId, epoch: b.epoch ?? UNCLAIMED_EPOCH }, deps.now());
    const before = await ctx.tx.task.findUniqueOrThrow({ where: { id: b.taskId } });
    await moveTasks(ctx.tx, { id: b.taskId }, "blocked", {
      data: { blockedLimit: b.limit, blockedCause: b.cause ?? null },
    });
    const now = deps.now();
    await moveRuns(ctx.tx, { id: b.runId }, "blocked", { data: { error: b.reason } });
    await appendToOutbox(
      ctx,
      [
        changeEvent(owner, "task.blocked", {
          taskId: b.taskId,
          key: `${b.limit}:${b.runId}`,
          actor: { kind: "system", id: "agent-runner" },
          now,
          payload: { limit: b.limit, ...(b.cause ? { cause: b.cause } : {}), reason: b.reason },
        }),
        ...claimReleased(owner, before, { actor: { kind: "system", id: "agent-runner" }, now }),
      ],
      deps,
    );
  });
}
