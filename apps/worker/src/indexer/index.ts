import { canonicalRepo, DomainError } from "@rhumbatron/core";
import {
  buildSearchIndex,
  type CommandHandler,
  recordIndexBuilt,
  recordIndexesPurged,
  recordIndexFailure,
  type SearchIndexDoc,
  searchIndexKey,
  searchIndexPrefix,
  withRepoToken,
} from "@rhumbatron/db";
import { z } from "zod";
import type { SourceHandlerDeps } from "../source/handlers.ts";
import { syncCanonical } from "../source/sync.ts";

/**
 * The indexer (spec: rhumbatron-indexer, indexing queue: batch 1, concurrency 1, failure recorded
 * in project_indexes). index.build first brings canonical main up to the project's generation (the
 * source sync of a promotion), then builds a search index of the generation's tree: an inverted
 * index of identifiers and words -> (path, line) over text files up to the code store's size
 * limit, stored as one blob. index.purge deletes a project's index blobs.
 */
const buildPayload = z.object({ generation: z.number().int().nonnegative() });

export function indexingHandlers(deps: SourceHandlerDeps): CommandHandler[] {
  const build: CommandHandler = {
    commandTypes: ["index.build"],
    ownTransaction: true,
    async handle(ctx) {
      const projectId = ctx.command.projectId;
      const payload = buildPayload.safeParse(ctx.command.payload);
      if (!payload.success) throw new DomainError("INVALID_INPUT", `index.build needs {generation}: ${payload.error}`);
      const { generation } = payload.data;
      const project = await ctx.tx.project.findUnique({ where: { id: projectId } });
      if (!project) throw new DomainError("NOT_FOUND", `project ${projectId} not found`);
      // The source sync of every promotion up to now; a repeat finds main where it should be.
      await syncCanonical(deps, projectId, Math.max(project.canonicalGeneration, generation));
      const gen = await ctx.tx.canonicalGeneration.findUniqueOrThrow({
        where: { projectId_generation: { projectId, generation } },
      });
      const key = searchIndexKey(projectId, gen.tree);
      const built = await ctx.tx.projectIndex.findFirst({ where: { projectId, tree: gen.tree, status: "built" } });
      if (built && (await deps.blobs.has(key))) return "done";
      const repo = canonicalRepo(projectId);
      const limit = deps.config.source.codeStoreMaxBlobBytes;
      const files = await withRepoToken(
        deps.db,
        { repo, mode: "read", purpose: `index S${generation}` },
        deps.config,
        deps.now,
        async (token) => {
          const out: { path: string; content: Uint8Array }[] = [];
          for (const f of await deps.source.files(repo, token, gen.commit)) {
            if (f.size <= limit) out.push({ path: f.path, content: await deps.source.readBlob(repo, token, f.oid) });
          }
          return out;
        },
      );
      const index = buildSearchIndex(files);
      const doc: SearchIndexDoc = { version: 1, projectId, generation, tree: gen.tree, commit: gen.commit, ...index };
      await deps.blobs.put(key, new TextEncoder().encode(JSON.stringify(doc)), { contentType: "application/json" });
      await recordIndexBuilt(ctx, { projectId, generation, tree: gen.tree, files: index.files.length, indexKey: key });
      return "done";
    },
    async onExhausted(ctx, message, error) {
      const env = message.envelope as { projectId?: string; payload?: { generation?: unknown } };
      if (!env.projectId) return;
      const g = buildPayload.safeParse(env.payload);
      await recordIndexFailure(ctx, { projectId: env.projectId, generation: g.success ? g.data.generation : 0, error });
    },
  };
  const purge: CommandHandler = {
    commandTypes: ["index.purge"],
    ownTransaction: true,
    async handle(ctx) {
      const projectId = ctx.command.projectId;
      for (const key of await deps.blobs.list(searchIndexPrefix(projectId))) await deps.blobs.delete(key);
      await recordIndexesPurged(ctx, projectId);
      return "done";
    },
    async onExhausted(ctx, message, error) {
      const env = message.envelope as { projectId?: string };
      if (!env.projectId) return;
      const p = await ctx.tx.project.findUnique({
        where: { id: env.projectId },
        select: { canonicalGeneration: true },
      });
      await recordIndexFailure(ctx, {
        projectId: env.projectId,
        generation: p?.canonicalGeneration ?? 0,
        error: `index.purge: ${error}`,
      });
    },
  };
  return [build, purge];
}
