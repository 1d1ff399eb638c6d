import { randomUUID } from "node:crypto";
import {
  type Actor,
  type ChangeInput,
  changeInput,
  commandIds,
  DomainError,
  validateWorkGraph,
} from "@rhumbatron/core";
import { appendToOutbox, enqueueCommand } from "@rhumbatron/runtime";
import { z } from "zod";
import type { Db } from "../client.ts";
import { type LockedProject, lockProjectRow } from "../events/owners.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { changeEvent, type WorkGraphDeps } from "./shared.ts";

export interface CreateChangeRequest {
  tenantId: string;
  projectId: string;
  clientRequestId: string;
  createdBy: Actor;
  input: ChangeInput;
  /** "Land when ready" (docs/landing.md): promoted without another click once verified and approved. */
  landWhenReady?: boolean;
}

export interface CreateChangeResult {
  changeId: string;
  created: boolean;
}

export const clientRequestId = z.string().trim().min(1).max(200);

/**
 * Creates a Change with its Work Graph in one transaction on the project root, writes
 * change.created and sends the first change.dispatch. Idempotent on (project_id, client_request_id):
 * a repeat returns the first Change and writes nothing. Bad input writes nothing.
 */
export async function createChange(db: Db, req: CreateChangeRequest, deps: WorkGraphDeps): Promise<CreateChangeResult> {
  const input = changeInput.parse(req.input);
  validateWorkGraph(input.tasks);
  return withTransaction(db, async (ctx) => {
    const project = await lockOpenProject(ctx, req);

    const changeId = `chg_${randomUUID()}`;
    const inserted = await ctx.tx.$queryRaw<{ id: string }[]>`
      INSERT INTO changes (id, project_id, title, description, risk_tier, client_request_id, created_by, goals, invariants, contract_changes,
        land_when_ready, landing_since)
      VALUES (${changeId}, ${project.id}, ${input.title}, ${input.description}, ${input.riskTier}::"RiskTier", ${req.clientRequestId},
        ${req.createdBy.id}, ${JSON.stringify(input.goals)}::jsonb, ${input.invariants}::text[], ${JSON.stringify(input.contractChanges)}::jsonb,
        ${req.landWhenReady === true}, ${req.landWhenReady === true ? deps.now() : null})
      ON CONFLICT (project_id, client_request_id) DO NOTHING RETURNING id`;
    if (inserted.length === 0) {
      const existing = await ctx.tx.change.findUniqueOrThrow({
        where: { projectId_clientRequestId: { projectId: project.id, clientRequestId: req.clientRequestId } },
        select: { id: true },
      });
      return { changeId: existing.id, created: false };
    }
    const tasks = await insertTasks(ctx, changeId, input.tasks);
    await announceChange(ctx, { req, input, project, changeId, taskIds: tasks.map((x) => x.id) }, deps);
    return { changeId, created: true };
  });
}

/** Locks the project row; a project of another tenant is NOT_FOUND, an archived or failed one takes no Change. */
async function lockOpenProject(ctx: TxContext, req: CreateChangeRequest): Promise<LockedProject> {
  const project = await lockProjectRow(ctx, req.projectId).catch((err: unknown) => {
    if (err instanceof DomainError && err.code === "NOT_FOUND") return null;
    throw err;
  });
  if (!project || project.tenantId !== req.tenantId)
    throw new DomainError("NOT_FOUND", `project ${req.projectId} not found`);
  const status = await ctx.tx.project.findUniqueOrThrow({
    where: { id: project.id },
    select: { status: true, failureReason: true },
  });
  if (status.status === "archived")
    throw new DomainError("PRECONDITION_FAILED", "the project is archived; changes cannot be added");
  // A failed project has no repository to change (docs/repositories.md).
  if (status.status === "failed")
    throw new DomainError(
      "PRECONDITION_FAILED",
      `the project failed to provision (${status.failureReason ?? "no reason recorded"}); changes cannot be added`,
    );
  return project;
}

/** Writes the Change's Tasks in the order given, each with a new ID. */
async function insertTasks(ctx: TxContext, changeId: string, input: ChangeInput["tasks"]) {
  const tasks = input.map((t, position) => ({ id: `task_${randomUUID()}`, t, position }));
  await ctx.tx.task.createMany({
    data: tasks.map(({ id, t, position }) => ({
      id,
      changeId,
      key: t.key,
      title: t.title,
      dependencies: t.dependsOn,
      position,
      intents: t.intents,
      ...(t.editPlan ? { editPlan: t.editPlan } : {}),
      ...(t.agent ? { agent: t.agent } : {}),
      // The first attempt is the Task's own run, with the first Agent listed (./attempts.ts).
      ...(t.attempts ? { attempts: t.attempts, agent: t.attempts.agents[0] } : {}),
    })),
  });
  return tasks;
}

/** Writes change.created and sends the first change.dispatch. */
async function announceChange(
  ctx: TxContext,
  c: { req: CreateChangeRequest; input: ChangeInput; project: LockedProject; changeId: string; taskIds: string[] },
  deps: WorkGraphDeps,
): Promise<void> {
  const { req, input, project, changeId } = c;
  const owner = {
    id: changeId,
    projectId: project.id,
    tenantId: project.tenantId,
    canonicalGeneration: project.canonicalGeneration,
  };
  const now = deps.now();
  await appendToOutbox(
    ctx,
    [
      changeEvent(owner, "change.created", {
        actor: req.createdBy,
        now,
        payload: {
          title: input.title,
          riskTier: input.riskTier,
          clientRequestId: req.clientRequestId,
          taskIds: c.taskIds,
        },
      }),
    ],
    deps,
  );
  await enqueueCommand(
    ctx,
    {
      commandId: commandIds.dispatchCreated(changeId),
      commandType: "change.dispatch",
      projectId: project.id,
      changeId,
      payload: { reason: "created" },
    },
    deps,
  );
}
