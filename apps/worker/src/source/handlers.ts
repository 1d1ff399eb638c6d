import {
  AGENT_RUN_STATUS_SETS,
  candidateFork,
  canonicalRepo,
  DomainError,
  type HandlerResult,
  workspaceFork,
} from "@rhumbatron/core";
import {
  type CommandHandler,
  type Db,
  recordProjectProvisioned,
  recordWorkspaceForkDeleted,
  withRepoToken,
} from "@rhumbatron/db";
import type { WorkerContext } from "../context.ts";
import { publishCodeStore } from "./code-store.ts";
import { readTemplate } from "./template.ts";

export type SourceHandlerDeps = Pick<
  WorkerContext,
  "db" | "config" | "nudger" | "now" | "source" | "blobs" | "templateDir"
>;

/**
 * project.provision (integration queue): creates the canonical repository from the project
 * template, fills the code store for S0, records generation 0 and activates the project with
 * project.created. Every step is idempotent, so a redelivery after a crash finishes the job.
 */
export function provisionHandler(deps: SourceHandlerDeps): CommandHandler {
  return {
    commandTypes: ["project.provision"],
    // Git and the code store, with no transaction open; then the rows.
    async prepare({ command }) {
      const projectId = command.projectId;
      const repo = canonicalRepo(projectId);
      const project = await deps.db.project.findUnique({ where: { id: projectId }, select: { id: true } });
      if (!project) throw new DomainError("NOT_FOUND", `project ${projectId} not found`);
      const files = await readTemplate(deps.templateDir);
      const s0 = await withRepoToken(
        deps.db,
        { repo, mode: "write", purpose: "provision" },
        deps.config,
        deps.now,
        (token) => deps.source.provision(repo, token, files, "S0: project template"),
      );
      await withRepoToken(deps.db, { repo, mode: "read", purpose: "code-store" }, deps.config, deps.now, (token) =>
        publishCodeStore({
          store: deps.source,
          blobs: deps.blobs,
          config: deps.config,
          projectId,
          repo,
          token,
          commit: s0.commit,
        }),
      );
      return { commit: s0.commit, tree: s0.tree };
    },
    async handle(ctx): Promise<HandlerResult> {
      const s0 = ctx.prepared as { commit: string; tree: string };
      await recordProjectProvisioned(
        ctx,
        { projectId: ctx.command.projectId, commit: s0.commit, tree: s0.tree, causedBy: ctx.command.commandId },
        deps,
      );
      return "done";
    },
  };
}

/** The repository names one project's rows derive (never a listing of the namespace). */
export async function repositoriesOf(db: Db, projectId: string): Promise<string[]> {
  const runs = await db.agentRun.findMany({
    where: { change: { projectId }, fork: { not: null } },
    select: { id: true },
  });
  const candidates = await db.candidate.findMany({ where: { projectId }, select: { id: true } });
  return [
    canonicalRepo(projectId),
    ...runs.map((r) => workspaceFork(r.id)),
    ...candidates.map((c) => candidateFork(c.id)),
  ];
}

/**
 * project.cleanup (integration queue): deletes the repositories named by this project's rows and
 * its source/<project>/ objects. It cannot reach another project: it never lists the namespace.
 */
export function cleanupHandler(deps: SourceHandlerDeps): CommandHandler {
  return {
    commandTypes: ["project.cleanup"],
    async prepare({ command }) {
      const projectId = command.projectId;
      for (const name of await repositoriesOf(deps.db, projectId)) await deps.source.delete(name);
      for (const key of await deps.blobs.list(`source/${projectId}/`)) await deps.blobs.delete(key);
    },
    handle: async () => "done",
  };
}

/**
 * forks.sweep (integration queue, daily, one per project): deletes the project's workspace forks
 * older than the environment's retention (7 days dev, 30 prod), a bounded number per delivery;
 * more work asks for another delivery, and what is left waits for the next daily tick.
 */
export const SWEEP_BATCH = 50;

export function forksSweepHandler(deps: SourceHandlerDeps): CommandHandler {
  return {
    commandTypes: ["forks.sweep"],
    // Reads and git deletes with no transaction open; the deleted forks are recorded in the ack's.
    async prepare({ command }) {
      const cutoff = new Date(deps.now().getTime() - deps.config.source.forkRetentionDays * 86_400_000);
      const old = await deps.db.agentRun.findMany({
        where: {
          change: { projectId: command.projectId },
          fork: { not: null },
          forkDeletedAt: null,
          createdAt: { lt: cutoff },
          status: { in: [...AGENT_RUN_STATUS_SETS.ended] },
        },
        orderBy: { createdAt: "asc" },
        take: SWEEP_BATCH + 1,
        select: { id: true },
      });
      // Candidate forks of Candidates that reached an end state and are past the retention.
      const oldCandidates = await deps.db.candidate.findMany({
        where: {
          projectId: command.projectId,
          createdAt: { lt: cutoff },
          status: { in: ["rejected", "stale", "promoted"] },
        },
        select: { id: true },
        take: SWEEP_BATCH,
      });
      for (const c of oldCandidates) await deps.source.delete(candidateFork(c.id));
      const swept = old.slice(0, SWEEP_BATCH).map((r) => r.id);
      for (const runId of swept) await deps.source.delete(workspaceFork(runId));
      return { swept, more: old.length > SWEEP_BATCH };
    },
    async handle(ctx) {
      const { swept, more } = ctx.prepared as { swept: string[]; more: boolean };
      for (const runId of swept) await recordWorkspaceForkDeleted(ctx, runId, deps.now());
      return more ? "more" : "done";
    },
  };
}
