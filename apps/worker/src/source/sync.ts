import { candidateFork, canonicalRepo, DomainError, sourceKeys } from "@rhumbatron/core";
import {
  type Db,
  type GenerationFacts,
  generationAtCommit,
  generationFacts,
  generationOf,
  generationsBetween,
  withRepoToken,
} from "@rhumbatron/db";
import { withLease } from "@rhumbatron/runtime";
import { withCanonicalCodeStore } from "./code-store.ts";
import type { SourceHandlerDeps } from "./handlers.ts";

/**
 * The source sync after a promotion (docs/verification.md, Release and
 * Search index): canonical main moves to the commit of a Canonical Generation, taking the objects
 * from that generation's Candidate fork, fast-forward only; then the code store of the new tree is
 * published, and each generation main reached gets its annotated tag (`gen-7`, naming the Change,
 * the Candidate and the approver). A main more than one generation behind advances generation by
 * generation. Every part
 * is idempotent: a repeat finds main where it should be and only fills in a code store a crash left
 * out, which is how a retried promotion (alreadyPromoted) repairs a sync that failed.
 */
export interface SyncResult {
  outcome: "already" | "advanced";
  generation: number;
  commit: string;
  tree: string;
  /** The generation canonical main was at before this sync. */
  from: number;
  /** Generations whose code store this sync published. */
  published: number[];
  /** Generations this sync tagged (`gen-<n>`). */
  tagged: number[];
}

/** A generation's tag name. */
export const generationTag = (generation: number) => `gen-${generation}`;

/** The tag's message: the Change's title, then trailers a reader (or `git interpret-trailers`) can parse. */
export function generationTagMessage(f: GenerationFacts): string {
  const title = f.changeTitle ?? `Generation ${f.generation}`;
  const trailers = [
    f.changeId ? `Change: ${f.changeId}` : null,
    f.candidateId ? `Candidate: ${f.candidateId}` : null,
    `Generation: ${f.generation}`,
    `Approved-by: ${f.approvedBy ?? "nobody (the policy asked for no approval)"}`,
  ].filter((t) => t !== null);
  return `${title}\n\n${trailers.join("\n")}\n`;
}

/** Tags generations first..last that main has reached and that have no tag yet. */
async function tagGenerations(deps: SyncDeps, projectId: string, first: number, last: number): Promise<number[]> {
  const repo = canonicalRepo(projectId);
  const facts = await generationFacts(deps.db, projectId, Math.max(1, first), last);
  if (facts.length === 0) return [];
  return withRepoToken(deps.db, { repo, mode: "write", purpose: "tags" }, deps.config, deps.now, async (token) => {
    const tagged: number[] = [];
    for (const f of facts) {
      const t = {
        name: generationTag(f.generation),
        commit: f.commit,
        message: generationTagMessage(f),
        at: deps.now(),
      };
      if ((await deps.source.tag(repo, token, t)) === "tagged") tagged.push(f.generation);
    }
    return tagged;
  });
}

export type SyncDeps = Pick<SourceHandlerDeps, "db" | "config" | "now" | "source" | "blobs">;

/**
 * Syncs of one project run one at a time (the indexer and a release may sync together): each holds
 * the project's sync lease, with no transaction open around its git and blob work.
 */
function withSyncLock<T>(db: Db, projectId: string, fn: () => Promise<T>): Promise<T> {
  return withLease(db, `source-sync:${projectId}`, { ttlMs: 60_000, waitMs: 120_000 }, fn);
}

/** Moves main up to `generation` one generation at a time; returns where it was and what moved. */
async function advanceMain(deps: SyncDeps, projectId: string, generation: number) {
  const repo = canonicalRepo(projectId);
  return withRepoToken(
    deps.db,
    { repo, mode: "write", purpose: `sync S${generation}` },
    deps.config,
    deps.now,
    async (token) => {
      const head = await deps.source.head(repo, token);
      const at = await generationAtCommit(deps.db, projectId, head);
      if (!at) throw new DomainError("CONFLICT", `${repo} main is at ${head.slice(0, 12)}, which is no generation`);
      if (at.generation >= generation) return { from: at.generation, steps: [] as number[] };
      const rows = await generationsBetween(deps.db, projectId, at.generation, generation);
      const steps: number[] = [];
      for (let i = 1; i < rows.length; i++) {
        const prev = rows[i - 1];
        const row = rows[i];
        if (!prev || !row || row.generation !== prev.generation + 1) {
          throw new DomainError(
            "NOT_FOUND",
            `project ${projectId} is missing generation ${(prev?.generation ?? 0) + 1}`,
          );
        }
        if (!row.candidateId) {
          throw new DomainError(
            "PRECONDITION_FAILED",
            `generation ${row.generation} names no Candidate to take it from`,
          );
        }
        const fork = candidateFork(row.candidateId);
        const r = await withRepoToken(
          deps.db,
          { repo: fork, mode: "read", purpose: `sync S${row.generation}` },
          deps.config,
          deps.now,
          (forkToken) => deps.source.fastForward(repo, token, fork, forkToken, prev.commit, row.commit),
        );
        if (r === "advanced") steps.push(row.generation);
      }
      return { from: at.generation, steps };
    },
  );
}

/** Publishes the code store of generations first..last that lack one (a crash may have left one out). */
async function publishMissing(deps: SyncDeps, projectId: string, first: number, last: number): Promise<number[]> {
  const rows = await generationsBetween(deps.db, projectId, Math.max(0, first - 1), last);
  const published: number[] = [];
  await withCanonicalCodeStore(deps, projectId, async (publish) => {
    for (const row of rows) {
      if (row.generation < first) continue;
      if (await deps.blobs.has(sourceKeys.code(projectId, row.tree))) continue;
      const previous = rows.find((r) => r.generation === row.generation - 1);
      await publish(row.commit, previous?.tree ?? null);
      published.push(row.generation);
    }
  });
  return published;
}

export async function syncCanonical(deps: SyncDeps, projectId: string, generation: number): Promise<SyncResult> {
  const target = await generationOf(deps.db, projectId, generation);
  if (!target) throw new DomainError("NOT_FOUND", `project ${projectId} has no generation ${generation}`);
  // The code store is published under the lock too: two syncs never write the same objects at once.
  return withSyncLock(deps.db, projectId, async () => {
    const moved = await advanceMain(deps, projectId, generation);
    const published = await publishMissing(deps, projectId, Math.min(moved.from, generation), generation);
    const tagged = await tagGenerations(deps, projectId, Math.min(moved.from, generation), generation);
    return {
      outcome: moved.steps.length > 0 ? "advanced" : "already",
      generation,
      commit: target.commit,
      tree: target.tree,
      from: moved.from,
      published,
      tagged,
    };
  });
}
