import { createHash } from "node:crypto";
import {
  type AgentChoice,
  type AttemptPick,
  candidateStatusesInto,
  commandIds,
  DomainError,
  type TaskAttempts,
  taskAttempts,
} from "@rhumbatron/core";
import { appendToOutbox, enqueueCommand } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { type LockedChange, lockResourceRow } from "../events/owners.ts";
import { moveCandidates, moveRuns } from "../statuses/moves.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { fenceRun, UNCLAIMED_EPOCH } from "./run-fence.ts";
import { changeEvent, nudgeAgentRunners, type WorkGraphDeps } from "./shared.ts";

/**
 * Attempts side by side (docs/attempts.md). A Task may ask for 2 to 4 attempts, each with its own
 * Agent: attempt 1 is the Task's own run (it moves the Task as any run does); attempts 2… are runs of
 * their own, queued beside it when the Task starts, which publish their own ChangeSets and never
 * move the Task. Once the Work Graph is complete, each attempt's ChangeSet is composed with the
 * other Tasks' into a Candidate of its own (candidates.alternative) and verified with its own
 * Evidence. Nothing lands until one attempt is picked, by a person or by the Task's rule; picking
 * cancels the other attempts' open Candidates, and a later recomposition composes the picked one.
 */

export function storedAttempts(json: unknown): TaskAttempts | null {
  if (json === null || json === undefined) return null;
  const r = taskAttempts.safeParse(json);
  return r.success ? r.data : null;
}

/**
 * The run of attempt `n` of a Task's `round` (its retry): one per attempt and round, whatever
 * redelivers the wake. Shaped as every run ID (`run_<uuid>`: it names a fork and a folder).
 */
export function attemptRunId(taskId: string, round: number, n: number): string {
  const h = createHash("sha256").update(`${taskId}:${round}:${n}`).digest("hex");
  return `run_${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Queues attempts 2… beside a Task's own run; a repeat adds nothing (their IDs are the attempt's). */
export async function queueAttemptRuns(
  ctx: TxContext,
  t: { task: { id: string; changeId: string; attempt: number; attempts: unknown }; agentId: string; commandId: string },
  deps: WorkGraphDeps,
): Promise<void> {
  const attempts = storedAttempts(t.task.attempts);
  if (!attempts) return;
  await ctx.tx.agentRun.createMany({
    data: attempts.agents.slice(1).map((agent: AgentChoice, i) => {
      const n = i + 2;
      return {
        id: attemptRunId(t.task.id, t.task.attempt, n),
        taskId: t.task.id,
        changeId: t.task.changeId,
        agentId: `${t.agentId}_a${n}`,
        wakeCommandId: `${t.commandId}_a${n}`,
        reason: "attempt",
        alternative: n,
        agent: agent as object,
      };
    }),
    skipDuplicates: true,
  });
  await nudgeAgentRunners(ctx, deps);
}

/**
 * An attempt's run ended: the run ends and attempt.finished is written, and when the Change's Work
 * Graph is complete already, the request for that attempt's Candidate (a Candidate per attempt is
 * made when the graph completes, for the attempts finished by then: createCandidate), in one
 * transaction while the runner still holds the run (`epoch`, ./run-fence.ts). A repeat writes
 * nothing new.
 */
export async function finishAttempt(
  db: Db,
  f: {
    runId: string;
    /** The runner's epoch (./run-fence.ts); none: a run no runner claimed. */
    epoch?: number;
    changeId: string;
    taskId: string;
    agentId: string;
    attempt: number;
    outcome: "completed" | "failed";
    changeSetId: string | null;
    reason?: string;
  },
  deps: WorkGraphDeps,
): Promise<void> {
  await withTransaction(db, async (ctx) => {
    const owner = await lockResourceRow(ctx, `change:${f.changeId}`);
    const now = deps.now();
    await fenceRun(ctx.tx, { runId: f.runId, epoch: f.epoch ?? UNCLAIMED_EPOCH }, now);
    await moveRuns(ctx.tx, { id: f.runId }, f.outcome, {
      data: { error: f.outcome === "failed" ? (f.reason ?? null) : null, updatedAt: now },
    });
    const change = await ctx.tx.change.findUniqueOrThrow({ where: { id: f.changeId }, select: { status: true } });
    await appendToOutbox(
      ctx,
      [
        changeEvent(owner, "attempt.finished", {
          taskId: f.taskId,
          key: f.runId,
          actor: { kind: "agent", id: f.agentId },
          now,
          payload: {
            attempt: f.attempt,
            runId: f.runId,
            agentId: f.agentId,
            outcome: f.outcome,
            changeSetId: f.changeSetId,
            ...(f.reason && f.outcome === "failed" ? { reason: f.reason.slice(0, 2000) } : {}),
          },
        }),
      ],
      deps,
    );
    if (f.outcome === "completed" && f.changeSetId && change.status === "verifying")
      await requestAttemptCandidate(ctx, owner, f.changeSetId, deps);
  });
}

/** candidate.create for one attempt's ChangeSet, keyed by it: a Candidate per attempt and base, once. */
export async function requestAttemptCandidate(
  ctx: TxContext,
  owner: LockedChange,
  changeSetId: string,
  deps: WorkGraphDeps,
): Promise<void> {
  await enqueueCommand(
    ctx,
    {
      commandId: commandIds.attemptCandidate(changeSetId),
      commandType: "candidate.create",
      projectId: owner.projectId,
      changeId: owner.id,
      payload: { attemptChangeSetId: changeSetId },
    },
    deps,
  );
}

/** The Change's Task with attempts and its rule, or null when none asks for attempts. */
export async function attemptedTask(
  ctx: TxContext | { tx: Db },
  changeId: string,
): Promise<{ id: string; key: string; attempts: TaskAttempts } | null> {
  const tasks = await ctx.tx.task.findMany({ where: { changeId }, select: { id: true, key: true, attempts: true } });
  for (const t of tasks) {
    const attempts = storedAttempts(t.attempts);
    if (attempts) return { id: t.id, key: t.key, attempts };
  }
  return null;
}

type OutboxDeps = Parameters<typeof appendToOutbox>[2] & { now: () => Date };

/**
 * Picks the attempt that goes on: the Change remembers it, attempt.picked is written, and every
 * open Candidate of another attempt is cancelled. A person may pick again while nothing landed
 * (the Candidates of the attempt picked before stay cancelled; a recomposition makes the new one's).
 */
export async function pickAttemptIn(
  ctx: TxContext,
  owner: LockedChange,
  p: { attempt: number; rule: AttemptPick; actorId?: string; candidateId: string | null },
  deps: OutboxDeps,
): Promise<{ picked: number; cancelled: string[] }> {
  const others = await ctx.tx.candidate.findMany({
    where: { changeId: owner.id, status: { in: candidateStatusesInto("cancelled") }, alternative: { not: p.attempt } },
    orderBy: { id: "asc" },
    select: { id: true },
  });
  const cancelled = others.map((c) => c.id);
  await moveCandidates(ctx.tx, { id: { in: cancelled } }, "cancelled");
  await ctx.tx.change.update({ where: { id: owner.id }, data: { pickedAttempt: p.attempt } });
  await appendToOutbox(
    ctx,
    [
      changeEvent(owner, "attempt.picked", {
        key: `${p.attempt}:${cancelled.join(",")}:${p.actorId ?? p.rule}`,
        actor: p.actorId ? { kind: "user", id: p.actorId } : { kind: "system", id: "attempt-rule" },
        now: deps.now(),
        payload: {
          attempt: p.attempt,
          rule: p.rule,
          candidateId: p.candidateId,
          ...(p.actorId ? { actorId: p.actorId } : {}),
          cancelledCandidateIds: cancelled,
        },
      }),
    ],
    deps,
  );
  return { picked: p.attempt, cancelled };
}

/** A person picks attempt `attempt` of the Change (approvers and up: the API's authorization). */
export async function pickAttempt(
  db: Db,
  p: { tenantId: string; changeId: string; attempt: number; actorId: string },
  deps: WorkGraphDeps,
): Promise<{ picked: number; cancelled: string[] }> {
  return withTransaction(db, async (ctx) => {
    const owner = await lockResourceRow(ctx, `change:${p.changeId}`).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === "NOT_FOUND") return null;
      throw err;
    });
    if (!owner || owner.tenantId !== p.tenantId) throw new DomainError("NOT_FOUND", `change ${p.changeId} not found`);
    const change = await ctx.tx.change.findUniqueOrThrow({ where: { id: p.changeId } });
    const task = await attemptedTask(ctx, p.changeId);
    if (!task) throw new DomainError("PRECONDITION_FAILED", "no Task of this Change asked for attempts");
    if (p.attempt > task.attempts.agents.length)
      throw new DomainError(
        "INVALID_INPUT",
        `Task ${task.key} has ${task.attempts.agents.length} attempts; there is no attempt ${p.attempt}`,
      );
    if (change.status === "promoted" || change.status === "cancelled")
      throw new DomainError("PRECONDITION_FAILED", `the change is ${change.status}: nothing is picked any more`);
    if (change.pickedAttempt === p.attempt) return { picked: p.attempt, cancelled: [] };
    const candidate = await ctx.tx.candidate.findFirst({
      where: { changeId: p.changeId, alternative: p.attempt },
      orderBy: { createdAt: "desc" },
      select: { id: true, status: true },
    });
    if (!candidate || !["verified", "stale"].includes(candidate.status))
      throw new DomainError(
        "PRECONDITION_FAILED",
        `attempt ${p.attempt} has no verified Candidate${candidate ? ` (its newest is ${candidate.status})` : ""}: pick one whose checks passed`,
      );
    const picked = await pickAttemptIn(
      ctx,
      owner,
      { attempt: p.attempt, rule: "person", actorId: p.actorId, candidateId: candidate.id },
      deps,
    );
    // A picked attempt whose Candidate went stale is composed again on the generation current now.
    if (candidate.status === "stale")
      await enqueueCommand(
        ctx,
        {
          commandId: commandIds.pickRecompose(candidate.id),
          commandType: "candidate.create",
          projectId: owner.projectId,
          changeId: owner.id,
          payload: { recomposeFrom: candidate.id, generation: owner.canonicalGeneration },
        },
        deps,
      );
    return picked;
  });
}

/**
 * After a Candidate of a Change with attempts got its result, in that transaction: the Task's rule
 * picks, when it can. `first_verified` picks the first attempt verified; `fewest_lines`, once every
 * attempt has a result (its run failed, or its newest Candidate was verified or rejected), the
 * verified attempt whose ChangeSet changes the fewest lines (the lower attempt on a tie). A person's
 * rule, or no verified attempt, picks nothing.
 */
export async function pickByRule(ctx: TxContext, owner: LockedChange, deps: OutboxDeps): Promise<void> {
  const change = await ctx.tx.change.findUniqueOrThrow({ where: { id: owner.id }, select: { pickedAttempt: true } });
  if (change.pickedAttempt !== null) return;
  const task = await attemptedTask(ctx, owner.id);
  if (!task || task.attempts.pick === "person") return;
  const candidates = await ctx.tx.candidate.findMany({
    where: { changeId: owner.id },
    orderBy: { createdAt: "desc" },
    select: { id: true, status: true, alternative: true, changeSetIds: true, updatedAt: true },
  });
  const newest = new Map<number, (typeof candidates)[number]>();
  for (const c of candidates) if (!newest.has(c.alternative)) newest.set(c.alternative, c);
  const verified = [...newest.values()].filter((c) => c.status === "verified");
  if (task.attempts.pick === "first_verified") {
    const first = verified.sort((a, b) => a.updatedAt.getTime() - b.updatedAt.getTime())[0];
    if (first)
      await pickAttemptIn(
        ctx,
        owner,
        { attempt: first.alternative, rule: "first_verified", candidateId: first.id },
        deps,
      );
    return;
  }
  const n = task.attempts.agents.length;
  const runs = await ctx.tx.agentRun.findMany({
    where: { changeId: owner.id, taskId: task.id },
    orderBy: { createdAt: "desc" },
    select: { alternative: true, status: true },
  });
  for (let a = 1; a <= n; a++) {
    const c = newest.get(a);
    const run = runs.find((r) => r.alternative === a);
    const settled = c ? ["verified", "rejected"].includes(c.status) : run?.status === "failed";
    if (!settled) return;
  }
  const sets = await ctx.tx.changeSet.findMany({
    where: { taskId: task.id },
    select: { id: true, alternative: true, changedLines: true },
  });
  const lines = (c: (typeof verified)[number]) =>
    sets.find((s) => s.alternative === c.alternative && c.changeSetIds.includes(s.id))?.changedLines ??
    Number.MAX_SAFE_INTEGER;
  const fewest = verified.sort((a, b) => lines(a) - lines(b) || a.alternative - b.alternative)[0];
  if (fewest)
    await pickAttemptIn(
      ctx,
      owner,
      { attempt: fewest.alternative, rule: "fewest_lines", candidateId: fewest.id },
      deps,
    );
}

/**
 * Why a Candidate of a Change with attempts may not land: no attempt is picked yet, or another one
 * was. Null when it may (or when no Task asked for attempts).
 */
export async function attemptPickBlock(db: Db, c: { changeId: string; alternative: number }): Promise<string | null> {
  const task = await attemptedTask({ tx: db }, c.changeId);
  if (!task) return null;
  const { pickedAttempt } = await db.change.findUniqueOrThrow({
    where: { id: c.changeId },
    select: { pickedAttempt: true },
  });
  if (pickedAttempt === null)
    return `Task ${task.key} has ${task.attempts.agents.length} attempts and none is picked yet: pick one (Pick on the Change page, or rhumbatron change pick)`;
  if (pickedAttempt !== c.alternative)
    return `attempt ${pickedAttempt} of Task ${task.key} was picked; this Candidate is attempt ${c.alternative}`;
  return null;
}
