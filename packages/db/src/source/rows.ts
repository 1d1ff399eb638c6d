import { randomUUID } from "node:crypto";
import { DomainError } from "@rhumbatron/core";
import { appendToOutbox, type OutboxDeps } from "@rhumbatron/runtime";
import { dropImportCredentials } from "../commands/import-credentials.ts";
import { projectEvent } from "../events/factory.ts";
import type { TxContext } from "../transaction.ts";

/**
 * The source side's state changes (the worker does the git and blob work, then records it here):
 * a provisioned project's generation 0 and activation, the search index rows, a swept fork. Each
 * runs in the caller's transaction, with its Event where it has one.
 */

/**
 * Records S0 (the template's commit) and activates a project still provisioning, with
 * project.created. A repeat (a redelivered project.provision) finds both done and writes nothing.
 */
export async function recordProjectProvisioned(
  ctx: TxContext,
  p: { projectId: string; commit: string; tree: string; causedBy: string },
  deps: OutboxDeps & { now: () => Date },
): Promise<{ activated: boolean }> {
  const project = await ctx.tx.project.findUnique({ where: { id: p.projectId } });
  if (!project) throw new DomainError("NOT_FOUND", `project ${p.projectId} not found`);
  await ctx.tx.canonicalGeneration.upsert({
    where: { projectId_generation: { projectId: p.projectId, generation: 0 } },
    create: { projectId: p.projectId, generation: 0, commit: p.commit, tree: p.tree },
    update: {},
  });
  await dropImportCredentials(ctx, p.projectId);
  if (project.status !== "provisioning") return { activated: false };
  await ctx.tx.project.update({ where: { id: p.projectId }, data: { status: "active" } });
  // A project-wide fact: a random ID taken inside the transaction that runs it once.
  const root = { id: p.projectId, tenantId: project.tenantId, canonicalGeneration: 0 };
  const event = projectEvent(root, "project.created", {
    actor: { kind: "system", id: "provisioner" },
    causedBy: p.causedBy,
    now: deps.now(),
    payload: { name: project.name },
  });
  await appendToOutbox(ctx, [event], deps);
  return { activated: true };
}

/**
 * A project still provisioning whose source cannot become generation 0 (an import that cannot be
 * read, is empty, lacks the branch or is over the limits): status failed with the reason, which
 * the project page and projects.overview show. No generation is written. A repeat changes nothing.
 */
export async function recordProjectProvisionFailed(
  ctx: TxContext,
  p: { projectId: string; reason: string },
): Promise<{ failed: boolean }> {
  await dropImportCredentials(ctx, p.projectId);
  const r = await ctx.tx.project.updateMany({
    where: { id: p.projectId, status: "provisioning" },
    data: { status: "failed", failureReason: p.reason.slice(0, 2000) },
  });
  return { failed: r.count === 1 };
}

const indexRowId = () => `pidx_${randomUUID().replace(/-/g, "")}`;

/** A generation's search index was built and stored at `indexKey`. */
export async function recordIndexBuilt(
  ctx: TxContext,
  i: { projectId: string; generation: number; tree: string; files: number; indexKey: string },
): Promise<void> {
  await ctx.tx.projectIndex.create({ data: { id: indexRowId(), ...i, status: "built" } });
}

/** An index build or purge that ran out of retries (the indexing queue records, never dead-letters). */
export async function recordIndexFailure(
  ctx: TxContext,
  f: { projectId: string; generation: number; error: string },
): Promise<void> {
  await ctx.tx.projectIndex.create({ data: { id: indexRowId(), ...f, status: "failed" } });
}

/** Every built index of the project is purged (its blobs were deleted). */
export async function recordIndexesPurged(ctx: TxContext, projectId: string): Promise<void> {
  await ctx.tx.projectIndex.updateMany({ where: { projectId, status: "built" }, data: { status: "purged" } });
}

/** A run's workspace fork was deleted by the sweep. */
export async function recordWorkspaceForkDeleted(ctx: TxContext, runId: string, now: Date): Promise<void> {
  await ctx.tx.agentRun.update({ where: { id: runId }, data: { forkDeletedAt: now } });
}

export async function recordCandidateForkDeleted(ctx: TxContext, candidateId: string, now: Date): Promise<void> {
  await ctx.tx.candidate.update({ where: { id: candidateId }, data: { forkDeletedAt: now } });
}
