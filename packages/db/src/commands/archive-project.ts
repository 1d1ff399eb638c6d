import { commandIds, DomainError } from "@rhumbatron/core";
import { type EnqueueDeps, enqueueCommand } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { projectEvent } from "../events/factory.ts";
import { withProjectRoot } from "../events/owners.ts";
import { dropImportCredentials } from "./import-credentials.ts";

export interface ArchiveResult {
  projectId: string;
  /** False when the project was already archived: nothing was written. */
  archived: boolean;
}

/** The one cleanup command of a project: a repeated archive finds it on the queue and sends nothing. */
export const cleanupCommandId = commandIds.cleanup;

/**
 * Archives a project: status `archived`, `project.archived` (a project-root fact, so the project
 * row is locked) and `project.cleanup`, which deletes the repositories and `source/<project>/`
 * objects its rows name: archiving removes the project's repositories and stored source. Rows
 * (generations, Changes, Candidates, the feed) stay, so the history can still be read.
 *
 * Idempotent: an archived project is left as it is. A project still `provisioning` is refused:
 * its provision command could run after the cleanup and leave a repository behind.
 */
export async function archiveProject(
  db: Db,
  p: { tenantId: string; projectId: string; actorId: string },
  deps: EnqueueDeps,
): Promise<ArchiveResult> {
  return withProjectRoot<ArchiveResult>(db, p.projectId, deps, async (ctx, root) => {
    // Another tenant's project is answered exactly like a missing one (and the transaction writes nothing).
    if (root.tenantId !== p.tenantId) throw new DomainError("NOT_FOUND", `project ${p.projectId} not found`);
    const project = await ctx.tx.project.findUniqueOrThrow({ where: { id: p.projectId }, select: { status: true } });
    if (project.status === "archived") return { result: { projectId: p.projectId, archived: false }, events: [] };
    if (project.status !== "active") {
      throw new DomainError(
        "PRECONDITION_FAILED",
        `the project is ${project.status}; archive it once provisioning has finished`,
      );
    }
    await ctx.tx.project.update({ where: { id: p.projectId }, data: { status: "archived" } });
    await dropImportCredentials(ctx, p.projectId);
    await enqueueCommand(
      ctx,
      { commandId: cleanupCommandId(p.projectId), commandType: "project.cleanup", projectId: p.projectId, payload: {} },
      deps,
    );
    // The search index lives outside source/<project>/; the indexer purges it.
    await enqueueCommand(
      ctx,
      {
        commandId: commandIds.indexPurge(p.projectId),
        commandType: "index.purge",
        projectId: p.projectId,
        payload: {},
      },
      deps,
    );
    const event = projectEvent(root, "project.archived", {
      actor: { kind: "user", id: p.actorId },
      now: deps.now(),
      payload: {},
    });
    return { result: { projectId: p.projectId, archived: true }, events: [event] };
  });
}
