import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { candidateFork, loadConfig } from "@rhumbatron/core";
import { type Db, issueRepoToken, localFolderBlobStore } from "@rhumbatron/db";
import { seedChange, seedProjects } from "@rhumbatron/db/testing";
import { pgNotifyNudger } from "@rhumbatron/runtime";
import { publishCodeStore } from "./code-store.ts";
import type { SourceHandlerDeps } from "./handlers.ts";
import { SourceStore } from "./store.ts";

/**
 * Test support only: a provisioned project whose generations are "promoted" without the
 * verification workflow: each one is a commit on a Candidate fork plus the rows promotion writes
 * (Candidate, canonical_generations, projects.canonical_generation). Canonical main stays behind,
 * as it does until the source sync runs.
 */
const enc = (s: string) => new TextEncoder().encode(s);
const who = { name: "Agent", email: "agent@localhost" };

export async function promotionFixture(db: Db, o: { now?: () => Date; releaseTarget?: unknown } = {}) {
  const config = loadConfig("dev");
  const now = o.now ?? (() => new Date());
  const root = mkdtempSync(join(tmpdir(), "rh-sync-"));
  const store = new SourceStore({ db, config, now, root: join(root, "git", "rhumbatron-projects-dev") });
  const blobs = localFolderBlobStore(join(root, "blobs"));
  const deps: SourceHandlerDeps = { db, config, nudger: pgNotifyNudger, now, source: store, blobs };
  const token = async (repo: string, mode: "read" | "write") =>
    (await issueRepoToken(db, { repo, mode, purpose: "test" }, config, now())).token;

  const projectId = `proj_${randomUUID()}`;
  const changeId = `chg_${randomBytes(8).toString("hex")}`;
  await seedProjects(db, [projectId]);
  if (o.releaseTarget !== undefined) {
    await db.project.update({ where: { id: projectId }, data: { releaseTarget: o.releaseTarget as object } });
  }
  await seedChange(db, projectId, changeId);
  const files = new Map([
    ["README.md", enc("# shop\n")],
    ["src/cart.ts", enc("export function addToCart(items: string[], item: string) {\n  return [...items, item];\n}\n")],
    ["src/wishlist.ts", enc("export const wished_items: string[] = [];\n")],
  ]);
  const s0 = await store.provision(projectId, await token(projectId, "write"), files, "S0: project template");
  await publishCodeStore({
    store,
    blobs,
    config,
    projectId,
    repo: projectId,
    token: await token(projectId, "read"),
    commit: s0.commit,
  });
  await db.canonicalGeneration.create({ data: { projectId, generation: 0, commit: s0.commit, tree: s0.tree } });
  const forks: string[] = [projectId];

  /** Promotes one more generation whose tree is the previous one after `edit`. */
  async function promote(edit: Record<string, string | null>) {
    const project = await db.project.findUniqueOrThrow({ where: { id: projectId } });
    const base = await db.canonicalGeneration.findUniqueOrThrow({
      where: { projectId_generation: { projectId, generation: project.canonicalGeneration } },
    });
    const candidateId = `cand_${randomBytes(16).toString("hex")}`;
    const fork = candidateFork(candidateId);
    // The previous generation's fork holds its commit even while canonical main is behind.
    const from = forks.at(-1) as string;
    await store.fork(from, await token(from, "read"), fork);
    const dir = join(root, "work", candidateId);
    await store.checkout(fork, await token(fork, "read"), dir, base.commit);
    for (const [path, content] of Object.entries(edit)) {
      if (content === null) await rm(join(dir, path));
      else {
        await mkdir(dirname(join(dir, path)), { recursive: true });
        await writeFile(join(dir, path), content);
      }
    }
    const commit = await store.commitAll(dir, `compose ${candidateId}`, who);
    if (!commit) throw new Error("nothing to commit");
    await store.push(dir, fork, await token(fork, "write"));
    const tree = await store.treeOf(fork, await token(fork, "read"), commit);
    const generation = project.canonicalGeneration + 1;
    await db.candidate.create({
      data: {
        id: candidateId,
        projectId,
        changeId,
        compositionKey: candidateId,
        baseGeneration: project.canonicalGeneration,
        baseCommit: base.commit,
        status: "promoted",
        composedCommit: commit,
        composedTree: tree,
        promotedGeneration: generation,
      },
    });
    await db.canonicalGeneration.create({ data: { projectId, generation, commit, tree, candidateId } });
    await db.project.update({ where: { id: projectId }, data: { canonicalGeneration: generation } });
    forks.push(fork);
    return { generation, candidateId, fork, commit, tree };
  }

  return { root, config, store, blobs, deps, token, projectId, changeId, s0, promote };
}
