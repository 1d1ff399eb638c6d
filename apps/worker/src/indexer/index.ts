import { randomUUID } from "node:crypto";
import { type BlobStore, canonicalRepo, DomainError } from "@rhumbatron/core";
import { type CommandHandler, type Db, type TxContext, withRepoToken } from "@rhumbatron/db";
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
export const searchIndexKey = (projectId: string, tree: string) => `index/${projectId}/${tree}/search.json`;
const indexPrefix = (projectId: string) => `index/${projectId}/`;

export interface SearchIndexDoc {
  version: 1;
  projectId: string;
  generation: number;
  tree: string;
  commit: string;
  files: string[];
  /** term -> flat [fileIndex, line, fileIndex, line, …], lines 1-based, in file then line order. */
  terms: Record<string, number[]>;
}

const WORD = /[A-Za-z_$][A-Za-z0-9_$]*/g;
const MAX_TERM = 64;

/** Lower-cased words of a text; identifiers also yield their camelCase and snake_case parts. */
export function termsOf(text: string, parts = true): Set<string> {
  const out = new Set<string>();
  const add = (w: string) => {
    const t = w.toLowerCase();
    if (t.length >= 2 && t.length <= MAX_TERM) out.add(t);
  };
  for (const [word] of text.matchAll(WORD)) {
    add(word);
    if (!parts) continue;
    for (const p of word.split(/[_$]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/)) if (p !== word) add(p);
  }
  return out;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Text is valid UTF-8 without NUL bytes; anything else is left out of the index. */
function textOf(bytes: Uint8Array): string | null {
  if (bytes.subarray(0, 8000).includes(0)) return null;
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

export function buildSearchIndex(
  files: { path: string; content: Uint8Array }[],
): Pick<SearchIndexDoc, "files" | "terms"> {
  const paths: string[] = [];
  const terms = new Map<string, number[]>();
  for (const f of files) {
    const text = textOf(f.content);
    if (text === null) continue;
    const fileIndex = paths.push(f.path) - 1;
    text.split("\n").forEach((line, i) => {
      for (const t of termsOf(line)) {
        const postings = terms.get(t);
        if (postings) postings.push(fileIndex, i + 1);
        else terms.set(t, [fileIndex, i + 1]);
      }
    });
  }
  return { files: paths, terms: Object.fromEntries([...terms].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
}

export interface SearchHit {
  path: string;
  line: number;
}
export interface SearchResult {
  generation: number;
  tree: string;
  /** Every matching line; `hits` holds the first `limit` of them. */
  total: number;
  hits: SearchHit[];
}

/**
 * Searches the project's newest built index: lines holding every word of the query, each word
 * matching as a prefix of an indexed term, case-insensitive. Null when no index is built yet.
 */
export async function searchProjectIndex(
  blobs: BlobStore,
  db: Db,
  projectId: string,
  query: string,
  opts: { limit?: number } = {},
): Promise<SearchResult | null> {
  const row = await db.projectIndex.findFirst({
    where: { projectId, status: "built" },
    orderBy: [{ generation: "desc" }, { createdAt: "desc" }],
  });
  const blob = row?.indexKey ? await blobs.get(row.indexKey) : null;
  if (!row || !blob) return null;
  const doc = JSON.parse(new TextDecoder().decode(blob.body)) as SearchIndexDoc;
  const words = [...termsOf(query, false)];
  let lines: Set<string> | undefined;
  for (const w of words) {
    const here = new Set<string>();
    for (const [term, postings] of Object.entries(doc.terms)) {
      if (!term.startsWith(w)) continue;
      for (let i = 0; i < postings.length; i += 2) here.add(`${postings[i]}:${postings[i + 1]}`);
    }
    const before: Set<string> | undefined = lines;
    lines = before ? new Set([...before].filter((l) => here.has(l))) : here;
  }
  const all = [...(lines ?? [])]
    .map((l) => l.split(":").map(Number) as [number, number])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .map(([f, line]) => ({ path: doc.files[f] as string, line }));
  const limit = opts.limit ?? 50;
  return { generation: row.generation, tree: row.tree ?? doc.tree, total: all.length, hits: all.slice(0, limit) };
}

const buildPayload = z.object({ generation: z.number().int().nonnegative() });

async function recordFailure(ctx: TxContext, projectId: string, generation: number, error: string) {
  await ctx.tx.projectIndex.create({
    data: { id: `pidx_${randomUUID().replace(/-/g, "")}`, projectId, generation, status: "failed", error },
  });
}

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
      await ctx.tx.projectIndex.create({
        data: {
          id: `pidx_${randomUUID().replace(/-/g, "")}`,
          projectId,
          generation,
          tree: gen.tree,
          status: "built",
          files: index.files.length,
          indexKey: key,
        },
      });
      return "done";
    },
    async onExhausted(ctx, message, error) {
      const env = message.envelope as { projectId?: string; payload?: { generation?: unknown } };
      if (!env.projectId) return;
      const g = buildPayload.safeParse(env.payload);
      await recordFailure(ctx, env.projectId, g.success ? g.data.generation : 0, error);
    },
  };
  const purge: CommandHandler = {
    commandTypes: ["index.purge"],
    ownTransaction: true,
    async handle(ctx) {
      const projectId = ctx.command.projectId;
      for (const key of await deps.blobs.list(indexPrefix(projectId))) await deps.blobs.delete(key);
      await ctx.tx.projectIndex.updateMany({ where: { projectId, status: "built" }, data: { status: "purged" } });
      return "done";
    },
    async onExhausted(ctx, message, error) {
      const env = message.envelope as { projectId?: string };
      if (!env.projectId) return;
      const p = await ctx.tx.project.findUnique({
        where: { id: env.projectId },
        select: { canonicalGeneration: true },
      });
      await recordFailure(ctx, env.projectId, p?.canonicalGeneration ?? 0, `index.purge: ${error}`);
    },
  };
  return [build, purge];
}
