import {
  commandIds,
  DomainError,
  type FixtureFile,
  type FixtureInput,
  fixtureContentHash,
  fixtureRecordIds,
  fixtureRefusal,
  type HandlerResult,
} from "@rhumbatron/core";
import { appendToOutbox, enqueueCommand } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { lockResourceRow } from "../events/owners.ts";
import { moveOne, moveTasks } from "../statuses/moves.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { insertChangeSet } from "./changeset-row.ts";
import { verificationIfGraphComplete } from "./complete-task.ts";
import { dependencyStack, type RunContext } from "./runs.ts";
import { changeEvent, type WorkGraphDeps } from "./shared.ts";

/**
 * A person's fixture for a Task (docs/agents.md, Publishing a fix by hand): the request (the API sends
 * `fixture.publish`), what the worker needs to do the git work, and the transaction that records
 * the ChangeSet and completes the Task.
 */
export interface FixtureRequestResult {
  commandId: string;
  changeId: string;
  /** The ChangeSet the command publishes (its ID derives from the command). */
  changeSetId: string;
  /** The same request was sent before (it is queued, or its ChangeSet is published already). */
  duplicate: boolean;
}

/**
 * Sends `fixture.publish` for a Task of the caller's tenant, with an ID derived from the Task's
 * attempt and the request's content, so a repeat is the same command. Refused (412) when the Task
 * may not take one now (fixtureRefusal); nothing is written then.
 */
export async function requestFixture(
  db: Db,
  q: { tenantId: string; taskId: string; actorId: string; input: FixtureInput },
  deps: WorkGraphDeps,
): Promise<FixtureRequestResult> {
  return withTransaction(db, async (ctx) => {
    const found = await ctx.tx.task.findUnique({ where: { id: q.taskId }, select: { changeId: true } });
    if (!found) throw new DomainError("NOT_FOUND", `task ${q.taskId} not found`);
    const owner = await lockResourceRow(ctx, `change:${found.changeId}`);
    if (owner.tenantId !== q.tenantId) throw new DomainError("NOT_FOUND", `task ${q.taskId} not found`);
    const task = await ctx.tx.task.findUniqueOrThrow({ where: { id: q.taskId } });
    const contentHash = fixtureContentHash(q.input);
    const commandId = commandIds.fixturePublish(task.id, task.attempt, contentHash);
    const { changeSetId } = fixtureRecordIds(commandId);
    if (await ctx.tx.changeSet.findUnique({ where: { id: changeSetId }, select: { id: true } }))
      return { commandId, changeId: owner.id, changeSetId, duplicate: true };
    const change = await ctx.tx.change.findUniqueOrThrow({ where: { id: owner.id }, select: { status: true } });
    const refusal = fixtureRefusal(task, change);
    if (refusal) throw new DomainError("PRECONDITION_FAILED", refusal);
    const sent = await enqueueCommand(
      ctx,
      {
        commandType: "fixture.publish",
        commandId,
        projectId: owner.projectId,
        changeId: owner.id,
        taskId: task.id,
        payload: {
          summary: q.input.summary,
          files: q.input.files,
          contentHash,
          actorId: q.actorId,
          attempt: task.attempt,
        },
      },
      deps,
    );
    if (!sent.sent)
      throw new DomainError(
        "PRECONDITION_FAILED",
        `the change has sent its ${deps.config.causal.commandsPerChangePerDay} commands for today; try again tomorrow (UTC)`,
      );
    return { commandId, changeId: owner.id, changeSetId, duplicate: sent.duplicate };
  });
}

/** What the worker reads before its git work: where the Task lives, its key and what it stacks on. */
export interface FixtureTask {
  projectId: string;
  changeId: string;
  key: string;
  title: string;
  stack: RunContext["stack"];
}

export async function loadFixtureTask(db: Db, taskId: string): Promise<FixtureTask> {
  const task = await db.task.findUnique({ where: { id: taskId }, include: { change: true } });
  if (!task) throw new DomainError("NOT_FOUND", `task ${taskId} not found`);
  return {
    projectId: task.change.projectId,
    changeId: task.changeId,
    key: task.key,
    title: task.title,
    stack: await dependencyStack(db, task.changeId, task.key),
  };
}

export interface FixtureRecord {
  commandId: string;
  taskId: string;
  changeId: string;
  actorId: string;
  attempt: number;
  summary: string;
  files: FixtureFile[];
  fork: string;
  baseCommit: string;
  commit: string;
  paths: string[];
  patch: { key: string; bytes: number; truncated: boolean } | null;
  /** Why the worker could not apply the files (a file where a folder is): recorded like a refusal. */
  refused?: string;
}

/**
 * The fixture's transaction (the command's handle): under the Change's lock, checks the Task again
 * (the worker's check is the one that counts), then records the run (`reason` fixture, the person
 * as its agent, so sweeps find its fork), the ChangeSet, the Task completed, changeset.published
 * and task.completed (and verification.started when that completes the Work Graph): what an Agent
 * run's publish and finish write. A redelivery finds the ChangeSet and writes nothing; a Task that
 * can no longer take the fixture gets a failed run saying why, and no ChangeSet.
 */
export async function recordFixture(
  ctx: TxContext,
  r: FixtureRecord,
  deps: WorkGraphDeps,
): Promise<{ result: HandlerResult; changeSetId: string | null; note: string }> {
  const owner = await lockResourceRow(ctx, `change:${r.changeId}`);
  const { runId, changeSetId } = fixtureRecordIds(r.commandId);
  if (await ctx.tx.changeSet.findUnique({ where: { id: changeSetId }, select: { id: true } }))
    return { result: "done", changeSetId, note: "published already" };
  const task = await ctx.tx.task.findUniqueOrThrow({ where: { id: r.taskId } });
  const change = await ctx.tx.change.findUniqueOrThrow({ where: { id: owner.id }, select: { status: true } });
  const refusal = r.refused ?? fixtureRefusal(task, change, r.attempt);
  const now = deps.now();
  const run = {
    id: runId,
    taskId: task.id,
    changeId: owner.id,
    agentId: r.actorId,
    wakeCommandId: r.commandId,
    reason: "fixture",
    fork: r.fork,
    startCommit: r.baseCommit,
    note: r.summary,
  };
  if (refusal) {
    await ctx.tx.agentRun.upsert({
      where: { id: runId },
      create: { ...run, status: "failed", error: refusal },
      update: {},
    });
    return { result: "done", changeSetId: null, note: refusal };
  }
  await ctx.tx.agentRun.create({ data: { ...run, status: "completed" } });
  await insertChangeSet(ctx.tx, {
    id: changeSetId,
    changeId: owner.id,
    taskId: task.id,
    runId,
    agentId: r.actorId,
    fork: r.fork,
    baseCommit: r.baseCommit,
    commit: r.commit,
    paths: r.paths,
    patch: r.patch ?? null,
  });
  await moveOne(
    `task ${task.id}`,
    "completed",
    moveTasks(ctx.tx, { id: task.id }, "completed", {
      data: { agentId: r.actorId, blockedLimit: null, blockedCause: null },
    }),
  );
  const actor = { kind: "user" as const, id: r.actorId };
  const events = [
    // Keyed apart from an Agent's ChangeSet of the same attempt (one a failed run may have published).
    changeEvent(owner, "changeset.published", {
      taskId: task.id,
      key: "fixture",
      attempt: task.attempt,
      actor,
      causedBy: r.commandId,
      now,
      payload: { changeSetId, agentId: r.actorId, paths: r.paths, patchRef: r.patch?.key ?? null },
    }),
    changeEvent(owner, "task.completed", {
      taskId: task.id,
      attempt: task.attempt,
      actor,
      causedBy: r.commandId,
      now,
      payload: { runId, changeSetId },
    }),
  ];
  const started = await verificationIfGraphComplete(ctx, owner, now);
  await appendToOutbox(ctx, started ? [...events, started] : events, deps);
  return { result: "done", changeSetId, note: `published ${changeSetId}` };
}
