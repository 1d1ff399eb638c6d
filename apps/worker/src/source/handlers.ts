import { rm } from "node:fs/promises";
import {
  candidateFork,
  canonicalRepo,
  DomainError,
  type HandlerResult,
  parseImportSource,
  workspaceFork,
} from "@rhumbatron/core";
import {
  type Db,
  forkOwnersOf,
  generationAtCommit,
  projectSourceOf,
  pushQuarantineOf,
  readImportCredentials,
  recordCandidateForkDeleted,
  recordProjectProvisioned,
  recordProjectProvisionFailed,
  recordWorkspaceForkDeleted,
  sweepableForks,
  withRepoToken,
} from "@rhumbatron/db";
import type { CommandHandler } from "@rhumbatron/runtime";
import type { WorkerContext } from "../context.ts";
import { withCanonicalCodeStore } from "./code-store.ts";
import { exists } from "./git-objects.ts";
import { ImportRefused } from "./import.ts";
import { readTemplate } from "./template.ts";

export type SourceHandlerDeps = Pick<
  WorkerContext,
  "db" | "config" | "nudger" | "now" | "source" | "blobs" | "templateDir" | "credentialSecret"
>;

/**
 * project.provision (integration queue): creates the canonical repository, from the project
 * template or, for an imported project, from its source's history (docs/repositories.md);
 * fills the code store for S0, records generation 0 and activates the project with project.created.
 * Every step is idempotent, so a redelivery after a crash finishes the job.
 *
 * An import that cannot succeed (ImportRefused: empty, no such branch or folder, over a limit,
 * refused by the server) fails the project at once with the reason and is acked, never retried.
 * Anything else (a connection refused, a server error) is retried by the queue; its last delivery
 * fails the project instead of dead-lettering the command, so the project never stays provisioning.
 */
type Provisioned = { commit: string; tree: string } | { failed: string } | { alreadyFailed: true };

export function provisionHandler(deps: SourceHandlerDeps): CommandHandler {
  return {
    commandTypes: ["project.provision"],
    // Git and the code store, with no transaction open; then the rows.
    async prepare({ command, message }): Promise<Provisioned> {
      const projectId = command.projectId;
      const repo = canonicalRepo(projectId);
      const project = await projectSourceOf(deps.db, projectId);
      if (!project) throw new DomainError("NOT_FOUND", `project ${projectId} not found`);
      if (project.status === "failed") return { alreadyFailed: true };
      let s0: { commit: string; tree: string };
      if (project.sourceKind === "import" || project.sourceKind === "push") {
        const quarantine = project.sourceKind === "push" ? await pushQuarantineOf(deps.db, projectId) : null;
        // The received push is dropped once it became main or cannot: only a retry still needs it.
        const dropQuarantine = () => (quarantine ? rm(quarantine, { recursive: true, force: true }) : undefined);
        try {
          s0 =
            project.sourceKind === "push"
              ? await pushedSource(deps, repo, quarantine)
              : await importSource(deps, projectId, repo, project.sourceUrl ?? "", project.sourceBranch, {
                  submodules: project.sourceSubmodules,
                });
          await dropQuarantine();
        } catch (err) {
          const reason = err instanceof Error ? err.message : String(err);
          if (err instanceof ImportRefused) {
            await dropQuarantine();
            return { failed: reason };
          }
          const retries = deps.config.queues.policies[message.queue].maxRetries;
          if (message.deliveries > retries) {
            await dropQuarantine();
            const what = project.sourceKind === "push" ? "the pushed repository" : project.sourceUrl;
            return { failed: `could not read ${what} after ${message.deliveries} attempts: ${reason}` };
          }
          throw err;
        }
      } else {
        const files = await readTemplate(deps.templateDir);
        s0 = await withRepoToken(
          deps.db,
          { repo, mode: "write", purpose: "provision" },
          deps.config,
          deps.now,
          (token) => deps.source.provision(repo, token, files, "S0: project template"),
        );
      }
      await withCanonicalCodeStore(deps, projectId, (publish) => publish(s0.commit));
      return { commit: s0.commit, tree: s0.tree };
    },
    async handle(ctx): Promise<HandlerResult> {
      const p = ctx.prepared as Provisioned;
      if ("alreadyFailed" in p) return "done";
      if ("failed" in p) {
        await recordProjectProvisionFailed(ctx, { projectId: ctx.command.projectId, reason: p.failed });
        return "done";
      }
      await recordProjectProvisioned(
        ctx,
        { projectId: ctx.command.projectId, commit: p.commit, tree: p.tree, causedBy: ctx.command.commandId },
        deps,
      );
      return "done";
    },
  };
}

/** Clones an imported project's source into its canonical repository (SourceStore.importRepository). */
async function importSource(
  deps: SourceHandlerDeps,
  projectId: string,
  repo: string,
  url: string,
  branch: string | null,
  o: { submodules: boolean },
): Promise<{ commit: string; tree: string }> {
  const parsed = parseImportSource(url);
  // The API stored only what this accepts; a row written otherwise is refused the same way.
  if (!parsed.ok) throw new ImportRefused(parsed.message);
  // Sealed by projects.import; the transaction that records the outcome deletes the row.
  const sealed = await readImportCredentials(deps.db, projectId, deps.credentialSecret);
  if (sealed.kind === "unreadable")
    throw new ImportRefused(
      "the credentials given with the import cannot be opened by this worker (RHUMBATRON_AUTH_SECRET differs from the web server's); import again",
    );
  const credentials = sealed.kind === "given" ? sealed.credentials : null;
  const limits = {
    maxBytes: deps.config.source.importMaxBytes,
    maxFiles: deps.config.source.importMaxFiles,
    idleSeconds: deps.config.source.importIdleSeconds,
  };
  return withRepoToken(deps.db, { repo, mode: "write", purpose: "import" }, deps.config, deps.now, (token) =>
    deps.source.importRepository(repo, token, parsed.source, branch, limits, credentials, o.submodules),
  );
}

/** Makes the canonical repository of a pushed project from the push's quarantine (SourceStore.importPushed). */
async function pushedSource(
  deps: SourceHandlerDeps,
  repo: string,
  quarantine: string | null,
): Promise<{ commit: string; tree: string }> {
  // A redelivery after the canonical repository was made finds it there (createCanonical returns it).
  const made = await deps.source.exists(repo);
  if (!made && (!quarantine || !(await exists(quarantine))))
    throw new ImportRefused(
      "the pushed repository is no longer on this worker's host (received by another worker, or removed); create the project again and push",
    );
  const limits = {
    maxBytes: deps.config.source.importMaxBytes,
    maxFiles: deps.config.source.importMaxFiles,
    idleSeconds: deps.config.source.importIdleSeconds,
  };
  return withRepoToken(deps.db, { repo, mode: "write", purpose: "push" }, deps.config, deps.now, (token) =>
    deps.source.importPushed(repo, token, quarantine ?? "", limits),
  );
}

/** The repository names one project's rows derive (never a listing of the namespace). */
export async function repositoriesOf(db: Db, projectId: string): Promise<string[]> {
  const { runIds, candidateIds } = await forkOwnersOf(db, projectId);
  return [canonicalRepo(projectId), ...runIds.map(workspaceFork), ...candidateIds.map(candidateFork)];
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
 * forks.sweep (integration queue, daily, one per project): deletes the project's forks older than
 * the environment's retention (7 days dev, 30 prod), a page of at most SWEEP_BATCH of each kind per
 * delivery, and records each deletion, so the next page (another delivery, asked for with "more")
 * starts after them. It keeps what may still be needed, and its query skips those, so they never
 * fill a page: workspace forks of a Change that is not final (a recomposition merges them again),
 * and the fork of a promoted Candidate whose generation canonical main has not reached yet (a
 * retried promotion's source sync takes its objects from it). Candidates that are still live keep
 * theirs too.
 */
export const SWEEP_BATCH = 50;

/** The generation canonical main is at (git's own account), or -1 when main names none. */
async function mainGeneration(deps: SourceHandlerDeps, projectId: string): Promise<number> {
  const repo = canonicalRepo(projectId);
  const head = await withRepoToken(deps.db, { repo, mode: "read", purpose: "sweep" }, deps.config, deps.now, (t) =>
    deps.source.head(repo, t),
  );
  return (await generationAtCommit(deps.db, projectId, head))?.generation ?? -1;
}

export function forksSweepHandler(deps: SourceHandlerDeps): CommandHandler {
  return {
    commandTypes: ["forks.sweep"],
    // Reads and git deletes with no transaction open; the deleted forks are recorded in the ack's.
    async prepare({ command }) {
      const projectId = command.projectId;
      const cutoff = new Date(deps.now().getTime() - deps.config.source.forkRetentionDays * 86_400_000);
      const synced = await mainGeneration(deps, projectId);
      const found = await sweepableForks(deps.db, projectId, {
        cutoff,
        syncedGeneration: synced,
        limit: SWEEP_BATCH + 1,
      });
      const sweptRuns = found.runIds.slice(0, SWEEP_BATCH);
      const sweptCandidates = found.candidateIds.slice(0, SWEEP_BATCH);
      for (const id of sweptCandidates) await deps.source.delete(candidateFork(id));
      for (const id of sweptRuns) await deps.source.delete(workspaceFork(id));
      const more = found.runIds.length > SWEEP_BATCH || found.candidateIds.length > SWEEP_BATCH;
      return { sweptRuns, sweptCandidates, more };
    },
    async handle(ctx) {
      const p = ctx.prepared as { sweptRuns: string[]; sweptCandidates: string[]; more: boolean };
      for (const id of p.sweptRuns) await recordWorkspaceForkDeleted(ctx, id, deps.now());
      for (const id of p.sweptCandidates) await recordCandidateForkDeleted(ctx, id, deps.now());
      return p.more ? "more" : "done";
    },
  };
}
