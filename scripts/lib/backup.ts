import { cp, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type BlobStore, DomainError } from "@rhumbatron/core";
import { type Db, exportTables, importTables, lastGenerations } from "@rhumbatron/db";
import { pointMainsAtGenerations } from "@rhumbatron/worker";

/**
 * `npm run admin -- backup|restore` (docs/production.md, "Backup and restore"). A backup is a
 * folder: `database/<table>.ndjson` (every row, as of one moment), `git/` (the repositories),
 * `blobs/` (every blob, with `blobs.json` listing their keys and metadata) and `manifest.json`.
 * The rows are read first, in one transaction; the repositories and blobs are copied after, so they
 * hold everything the rows name. A restore writes the rows into a fresh installation, copies the
 * repositories and blobs back, and moves each project's main to the last generation the rows
 * record: the rows decide, and what the files hold beyond them is left unreferenced.
 */
export interface Installation {
  db: Db;
  blobs: BlobStore;
  /** The git folder of the installation's repositories (`<data>/git/<namespace>`). */
  gitRoot: string;
}

export interface BackupManifest {
  version: 1;
  takenAt: string;
  tables: Record<string, number>;
  blobs: number;
}

async function isEmptyOrMissing(dir: string): Promise<boolean> {
  return (await readdir(dir).catch(() => [])).length === 0;
}

/**
 * Copies every repository under `root` while the installation runs: each one's refs first, then its
 * objects. Git writes an object before the ref that names it and never removes one, so every ref
 * copied names objects that the later copy of the objects holds (a plain copy can tear: a tag's ref
 * copied without its object).
 */
async function copyRepositories(root: string, to: string): Promise<void> {
  const repos = await readdir(root).catch(() => [] as string[]);
  for (const repo of repos) {
    const src = join(root, repo);
    const dst = join(to, repo);
    await mkdir(dst, { recursive: true });
    const entries = await readdir(src);
    const first = entries.filter((e) => e !== "objects");
    for (const e of first) await cp(join(src, e), join(dst, e), { recursive: true });
    if (entries.includes("objects")) await cp(join(src, "objects"), join(dst, "objects"), { recursive: true });
  }
}

export async function takeBackup(from: Installation, to: string, now = new Date()): Promise<BackupManifest> {
  if (!(await isEmptyOrMissing(to)))
    throw new DomainError("PRECONDITION_FAILED", `${to} is not empty: back up into a new folder`);
  const dumps = await exportTables(from.db);
  await mkdir(join(to, "database"), { recursive: true });
  const tables: Record<string, number> = {};
  for (const d of dumps) {
    await writeFile(join(to, "database", `${d.table}.ndjson`), d.rows.map((r) => `${r}\n`).join(""));
    tables[d.table] = d.rows.length;
  }
  await copyRepositories(from.gitRoot, join(to, "git"));
  const keys = await from.blobs.list("");
  const listed: { key: string; metadata?: Record<string, string> }[] = [];
  for (const key of keys) {
    const blob = await from.blobs.get(key);
    if (!blob) continue; // deleted since it was listed (retention): nothing names it any more
    await mkdir(dirname(join(to, "blobs", key)), { recursive: true });
    await writeFile(join(to, "blobs", key), blob.body);
    listed.push({ key, ...(blob.metadata ? { metadata: blob.metadata } : {}) });
  }
  await writeFile(join(to, "blobs.json"), JSON.stringify(listed));
  const manifest: BackupManifest = { version: 1, takenAt: now.toISOString(), tables, blobs: listed.length };
  await writeFile(join(to, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

export interface RestoreResult {
  tables: Record<string, number>;
  blobs: number;
  mains: { projectId: string; moved: boolean; problem?: string }[];
}

export async function restoreBackup(from: string, to: Installation): Promise<RestoreResult> {
  const manifest = JSON.parse(
    await readFile(join(from, "manifest.json"), "utf8").catch(() => "null"),
  ) as BackupManifest | null;
  if (manifest?.version !== 1)
    throw new DomainError("INVALID_INPUT", `${from} is not a backup (no manifest.json of version 1)`);
  if (!(await isEmptyOrMissing(to.gitRoot))) {
    throw new DomainError(
      "PRECONDITION_FAILED",
      `${to.gitRoot} holds repositories: restore goes into a fresh installation`,
    );
  }
  const dumps = await Promise.all(
    Object.keys(manifest.tables).map(async (table) => {
      const text = await readFile(join(from, "database", `${table}.ndjson`), "utf8");
      return { table, rows: text.split("\n").filter((l) => l !== "") };
    }),
  );
  const tables = await importTables(to.db, dumps);
  await cp(join(from, "git"), to.gitRoot, { recursive: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "ENOENT") throw err;
  });
  const listed = JSON.parse(await readFile(join(from, "blobs.json"), "utf8")) as {
    key: string;
    metadata?: Record<string, string>;
  }[];
  for (const b of listed) await to.blobs.put(b.key, await readFile(join(from, "blobs", b.key)), b.metadata);
  const mains = await pointMainsAtGenerations(to.gitRoot, await lastGenerations(to.db));
  return { tables, blobs: listed.length, mains };
}
