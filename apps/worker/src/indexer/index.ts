import { canonicalRepo, DomainError } from "@rhumbatron/core";
import {
  buildSearchIndex,
  canonicalGenerationOf,
  generationOf,
  projectIndexRow,
  recordIndexBuilt,
  recordIndexesPurged,
  recordIndexFailure,
  type SearchIndexDoc,
  searchIndexKey,
  searchIndexPrefix,
  withRepoToken,
} from "@rhumbatron/db";
import type { CommandHandler } from "@rhumbatron/runtime";
import { z } from "zod";
import type { SourceHandlerDeps } from "../source/handlers.ts";
import { syncCanonical } from "../source/sync.ts";

/**
 * The indexer (docs/verification.md, Search index): the indexing queue,
 * batch 1, concurrency 1, a build that runs out of retries recorded as failed in project_indexes.
 * index.build first brings canonical main up to the project's generation (the source sync of a
 * promotion), then builds a search index of the generation's tree: an inverted
 * index of identifiers and words -> (path, line) over text files up to the code store's size
 * limit, stored as one blob. index.purge deletes a project's index blobs.
 */
const buildPayload = z.object({ generation: z.number().int().nonnegative() });

/** The generation's text files up to the code store's size limit, read with a read token. */
async function readGeneration(
  deps: SourceHandlerDeps,
  projectId: string,
  generation: number,
  commit: string,
): Promise<{ path: string; content: Uint8Array }[]> {
  const repo = canonicalRepo(projectId);
  const limit = deps.config.source.codeStoreMaxBlobBytes;
  return withRepoToken(
    deps.db,
    { repo, mode: "read", purpose: `index S${generation}` },
    deps.config,
    deps.now,
    async (token) => {
      const out: { path: string; content: Uint8Array }[] = [];
      for (const f of await deps.source.files(repo, token, commit)) {
        if (f.size <= limit) out.push({ path: f.path, content: await deps.source.readBlob(repo, token, f.oid) });
      }
      return out;
    },
  );
}

export function indexingHandlers(deps: SourceHandlerDeps): CommandHandler[] {
  const build: CommandHandler = {
    commandTypes: ["index.build"],
    // The sync, the reads and the blob write with no transaction open; the index row in the ack's.
    async prepare({ command }) {
      const projectId = command.projectId;
      const payload = buildPayload.safeParse(command.payload);
      if (!payload.success) throw new DomainError("INVALID_INPUT", `index.build needs {generation}: ${payload.error}`);
      const { generation } = payload.data;
      const current = await canonicalGenerationOf(deps.db, projectId);
      if (current === null) throw new DomainError("NOT_FOUND", `project ${projectId} not found`);
      // The source sync of every promotion up to now; a repeat finds main where it should be.
      await syncCanonical(deps, projectId, Math.max(current, generation));
      const gen = await generationOf(deps.db, projectId, generation);
      if (!gen) throw new DomainError("NOT_FOUND", `project ${projectId} has no generation ${generation}`);
      const key = searchIndexKey(projectId, gen.tree);
      const built = await projectIndexRow(deps.db, projectId, { builtTree: gen.tree });
      if (built && (await deps.blobs.has(key))) return null;
      const index = buildSearchIndex(await readGeneration(deps, projectId, generation, gen.commit));
      const doc: SearchIndexDoc = { version: 1, projectId, generation, tree: gen.tree, commit: gen.commit, ...index };
      await deps.blobs.put(key, new TextEncoder().encode(JSON.stringify(doc)), { contentType: "application/json" });
      return { projectId, generation, tree: gen.tree, files: index.files.length, indexKey: key };
    },
    async handle(ctx) {
      const built = ctx.prepared as Parameters<typeof recordIndexBuilt>[1] | null;
      if (built) await recordIndexBuilt(ctx, built);
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
    async prepare({ command }) {
      for (const key of await deps.blobs.list(searchIndexPrefix(command.projectId))) await deps.blobs.delete(key);
    },
    async handle(ctx) {
      await recordIndexesPurged(ctx, ctx.command.projectId);
      return "done";
    },
    async onExhausted(ctx, message, error) {
      const env = message.envelope as { projectId?: string };
      if (!env.projectId) return;
      const current = await canonicalGenerationOf(ctx.tx, env.projectId);
      await recordIndexFailure(ctx, {
        projectId: env.projectId,
        generation: current ?? 0,
        error: `index.purge: ${error}`,
      });
    },
  };
  return [build, purge];
}
