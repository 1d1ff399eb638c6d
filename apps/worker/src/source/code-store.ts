import { type BlobStore, canonicalRepo, type RhumbatronConfig, sourceKeys, truncatePatch } from "@rhumbatron/core";
import { type Db, withRepoToken } from "@rhumbatron/db";
import type { SourceApi } from "./store.ts";

/**
 * The file index and code store of one canonical tree, published when a project is provisioned and
 * after every promotion:
 *  - source/<project>/<tree>/index.json  every file with its size and blob id (agents read this
 *    instead of walking the repository);
 *  - source/<project>/<tree>/code.json   path -> blob id;
 *  - source/<project>/blobs/<blob>       each blob once; a promotion copies only the blobs the
 *    previous tree did not have; files over the size limit are listed but not copied.
 */
export interface CodeStoreResult {
  tree: string;
  files: number;
  copied: number;
  skippedLarge: number;
}

export async function publishCodeStore(o: {
  store: SourceApi;
  blobs: BlobStore;
  config: RhumbatronConfig;
  projectId: string;
  repo: string;
  token: string;
  commit: string;
  previousTree?: string | null;
}): Promise<CodeStoreResult> {
  const tree = await o.store.treeOf(o.repo, o.token, o.commit);
  const files = await o.store.files(o.repo, o.token, o.commit);
  const limit = o.config.source.codeStoreMaxBlobBytes;
  let previous = new Set<string>();
  if (o.previousTree) {
    const prev = await o.blobs.get(sourceKeys.code(o.projectId, o.previousTree));
    if (prev)
      previous = new Set(Object.values(JSON.parse(new TextDecoder().decode(prev.body)) as Record<string, string>));
  }
  let copied = 0;
  let skippedLarge = 0;
  for (const f of files) {
    if (f.size > limit) {
      skippedLarge++;
      continue;
    }
    if (previous.has(f.oid)) continue;
    const key = sourceKeys.blob(o.projectId, f.oid);
    if (await o.blobs.has(key)) continue;
    await o.blobs.put(key, await o.store.readBlob(o.repo, o.token, f.oid), { size: String(f.size) });
    copied++;
  }
  const index = {
    projectId: o.projectId,
    commit: o.commit,
    tree,
    files: files.map((f) => ({ path: f.path, blob: f.oid, size: f.size, stored: f.size <= limit })),
  };
  const code = Object.fromEntries(files.map((f) => [f.path, f.oid]));
  const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  await o.blobs.put(sourceKeys.index(o.projectId, tree), json(index), { contentType: "application/json" });
  await o.blobs.put(sourceKeys.code(o.projectId, tree), json(code), { contentType: "application/json" });
  return { tree, files: files.length, copied, skippedLarge };
}

/** What publishing a project's canonical trees needs: the git store and blobs, and a read token of the canonical repository. */
export interface CanonicalCodeStoreDeps {
  db: Db;
  config: RhumbatronConfig;
  now: () => Date;
  source: SourceApi;
  blobs: BlobStore;
}

/**
 * Runs `fn` with `publish`, which publishes the code store of one commit of the project's canonical
 * repository (after `previousTree`'s, when given); every publish in `fn` reads under one read token
 * (purpose `code-store`), revoked when `fn` ends.
 */
export function withCanonicalCodeStore<T>(
  deps: CanonicalCodeStoreDeps,
  projectId: string,
  fn: (publish: (commit: string, previousTree?: string | null) => Promise<CodeStoreResult>) => Promise<T>,
): Promise<T> {
  const repo = canonicalRepo(projectId);
  return withRepoToken(deps.db, { repo, mode: "read", purpose: "code-store" }, deps.config, deps.now, (token) =>
    fn((commit, previousTree) =>
      publishCodeStore({
        store: deps.source,
        blobs: deps.blobs,
        config: deps.config,
        projectId,
        repo,
        token,
        commit,
        ...(previousTree !== undefined ? { previousTree } : {}),
      }),
    ),
  );
}

/** Stores a patch under its key, cut at the configured size on a line boundary. */
export async function storePatch(blobs: BlobStore, key: string, patch: string, maxBytes: number) {
  const cut = truncatePatch(patch, maxBytes);
  await blobs.put(key, new TextEncoder().encode(cut.text), {
    contentType: "text/x-diff",
    truncated: String(cut.truncated),
    fullSize: String(cut.fullBytes),
  });
  return { key, truncated: cut.truncated, fullBytes: cut.fullBytes };
}
