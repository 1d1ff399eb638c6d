import { createHash, randomUUID } from "node:crypto";
import { lstat, mkdir, readdir, realpath, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { DomainError } from "@rhumbatron/core";
import {
  cachePath,
  checkKey,
  checkLink,
  cp,
  exists,
  KEY,
  META,
  type Meta,
  measure,
  normalisePaths,
  prepareDestination,
  readMeta,
  sourceKind,
} from "./setup-cache-files.ts";

/**
 * The setup cache: what a checks file's setup step produced (`cache:` paths, e.g. node_modules),
 * kept on the host by content so the next Candidate with the same lockfile installs nothing.
 *
 * An entry is `<root>/<key>/` holding `meta.json` and `data/<path>` for each saved path. Entries are
 * written whole into `<root>/.tmp-*` and renamed into place, and removed by renaming them to
 * `<root>/.trash-*` first, so a `<key>` folder without a readable meta.json is never a save in
 * progress: it is damage, treated as a miss and removed.
 *
 * Copies in both directions are `cp -a --reflink=auto` (a real copy, or copy-on-write where the file
 * system can), never hard links: a check writing into a restored file must not reach the cache.
 *
 * A worker killed in the middle of a save or a removal leaves its `.tmp-*` or `.trash-*` folder
 * behind (nothing reads them). Every save deletes those not modified for LEFTOVER_MS, longer than
 * any save takes, so a save in flight in another worker is never touched.
 *
 * The key does not name the project. Two projects with the same lockfile, argv and toolchain share
 * an entry, and a setup step runs the project's own code (install scripts), so whoever saved first
 * decides what the other restores. Give each project its own `root`, or put the project id in
 * `toolchain`, unless sharing across projects is intended.
 */

export interface SetupCacheOptions {
  /** Where entries live; created on first save. Nothing else may write here. */
  root: string;
  /** The most the entries' saved bytes may total; the oldest-used entries go first. */
  maxBytes: number;
  /** The clock for createdAt/lastUsedAt (tests inject one to order entries without sleeping). */
  now?: () => Date;
}

export interface SetupCacheKeyInput {
  stepId: string;
  argv: readonly string[];
  /** The step's `key` files as read from the checkout; `bytes: null` when the file does not exist. */
  keyFiles: { path: string; bytes: Uint8Array | null }[];
  /** Tool name to version output (`node --version`), so a new toolchain never reuses old builds. */
  toolchain: Record<string, string>;
}

export interface RestoreResult {
  paths: string[];
  bytes: number;
}

export interface SaveResult {
  /** Paths copied into the entry (normalised, relative to the workspace). */
  saved: string[];
  /** Paths the workspace did not have; skipped, the rest is still saved. */
  missing: string[];
  bytes: number;
  /** False when the entry alone is over maxBytes: it was not kept. */
  kept: boolean;
  /** Keys removed to make room, oldest-used first. */
  evicted: string[];
}

export interface SetupCacheUsage {
  entries: number;
  bytes: number;
}

const LEFTOVER = /^\.(tmp|trash)-[0-9a-f-]{36}$/;
/** A temporary or trash folder untouched for this long was left by a worker that died (an hour). */
export const LEFTOVER_MS = 60 * 60 * 1000;
const DATA = "data";

/**
 * sha256 over a canonical JSON of everything the step's result depends on. Key files are hashed
 * first and sorted by path (the order they are listed in does not change what they hold); a missing
 * file is null, distinct from an empty one (the hash of no bytes). Toolchain entries are sorted by name.
 */
export function setupCacheKey(input: SetupCacheKeyInput): string {
  const files = input.keyFiles
    .map((f) => [f.path, f.bytes === null ? null : createHash("sha256").update(f.bytes).digest("hex")] as const)
    .sort((a, b) => compare(a[0], b[0]) || compare(a[1] ?? "", b[1] ?? ""));
  const toolchain = Object.entries(input.toolchain).sort((a, b) => compare(a[0], b[0]));
  const canonical = JSON.stringify({
    v: 1,
    stepId: input.stepId,
    argv: [...input.argv],
    keyFiles: files,
    toolchain,
  });
  return createHash("sha256").update(canonical).digest("hex");
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class SetupCache {
  readonly #root: string;
  readonly #maxBytes: number;
  readonly #now: () => Date;

  constructor(o: SetupCacheOptions) {
    if (!Number.isFinite(o.maxBytes) || o.maxBytes < 0) {
      throw new DomainError("INVALID_CONFIG", `setup cache maxBytes must be a non-negative number, got ${o.maxBytes}`);
    }
    this.#root = resolve(o.root);
    this.#maxBytes = o.maxBytes;
    this.#now = o.now ?? (() => new Date());
  }

  /**
   * Copies the entry's saved paths into `workspace` (each path replaced), returns what was restored,
   * or null on a miss. Touches the entry (last used). Each destination is removed first (rm of the
   * path itself, which removes a symlink rather than following it) and no folder on the way to it may
   * be a symlink, so a restore never writes outside the workspace.
   */
  async restore(key: string, workspace: string): Promise<RestoreResult | null> {
    checkKey(key);
    const entry = join(this.#root, key);
    const meta = await this.#readEntry(key);
    if (!meta) return null;
    const ws = resolve(workspace);
    const paths = meta.paths.map(cachePath);
    for (const p of paths) await prepareDestination(ws, p);
    try {
      for (const p of paths) await cp(join(entry, DATA, p), join(ws, p));
    } catch (err) {
      // Evicted while we copied: a miss, and nothing half-restored left behind.
      if (!(await exists(join(entry, META)))) {
        for (const p of paths) await rm(join(ws, p), { recursive: true, force: true });
        return null;
      }
      throw err;
    }
    await this.#touch(key, meta);
    return { paths, bytes: meta.bytes };
  }

  /**
   * Saves `paths` (relative to the workspace; missing ones are skipped and reported) as the entry
   * `key`, atomically: copied into a temporary folder, checked, measured, then renamed into place; of
   * two concurrent saves of one key the first rename wins and the other copy is dropped. Then evicts
   * oldest-used entries until the total is within maxBytes, never the entry just saved; an entry
   * alone over the limit is not kept (`kept: false`) and evicts nothing.
   *
   * Refused (INVALID_INPUT / FORBIDDEN): absolute paths, `..`, overlapping paths, a folder on the way
   * to a path that is a symlink, and any symlink in what is saved whose target is absolute or leads
   * out of the workspace (it would lead somewhere else in the workspace it is restored into).
   */
  async save(key: string, workspace: string, paths: readonly string[]): Promise<SaveResult> {
    checkKey(key);
    const ws = resolve(workspace);
    const wanted = normalisePaths(paths);
    const wsReal = await realpath(ws).catch(() => {
      throw new DomainError("NOT_FOUND", `workspace ${ws} does not exist`);
    });
    await mkdir(this.#root, { recursive: true, mode: 0o700 });
    const tmp = join(this.#root, `.tmp-${randomUUID()}`);
    await mkdir(join(tmp, DATA), { recursive: true, mode: 0o700 });
    try {
      const saved: string[] = [];
      const missing: string[] = [];
      for (const p of wanted) {
        const found = await sourceKind(ws, p);
        if (found === "missing") {
          missing.push(p);
          continue;
        }
        const to = join(tmp, DATA, p);
        await mkdir(dirname(to), { recursive: true, mode: 0o700 });
        await cp(join(ws, p), to);
        saved.push(p);
      }
      // Checked on the copy, which nothing else writes to, so what is checked is what is kept.
      const seenInodes = new Set<string>();
      let bytes = 0;
      for (const p of saved) {
        bytes += await measure(
          join(tmp, DATA),
          p,
          async (rel, target) => {
            await checkLink(ws, wsReal, rel, target);
          },
          seenInodes,
        );
      }
      const now = this.#now().toISOString();
      const meta: Meta = { version: 1, key, paths: saved, bytes, createdAt: now, lastUsedAt: now };
      if (bytes > this.#maxBytes) {
        return { saved, missing, bytes, kept: false, evicted: [] };
      }
      await writeFile(join(tmp, META), JSON.stringify(meta), { mode: 0o600 });
      await this.#install(tmp, key);
      await this.#sweepLeftovers();
      const evicted = await this.#evict(key);
      return { saved, missing, bytes, kept: true, evicted };
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }

  /** Total bytes and entries, for status pages. Damaged entries are not counted (and left for the next save). */
  async usage(): Promise<SetupCacheUsage> {
    let entries = 0;
    let bytes = 0;
    for (const key of await this.#keys()) {
      const meta = await readMeta(join(this.#root, key), key);
      if (!meta) continue;
      entries++;
      bytes += meta.bytes;
    }
    return { entries, bytes };
  }

  /** Renames the finished temporary folder to `<root>/<key>`; a valid entry already there wins, a damaged one is replaced. */
  async #install(tmp: string, key: string): Promise<void> {
    const entry = join(this.#root, key);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await rename(tmp, entry);
        return;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== "ENOTEMPTY" && code !== "EEXIST") throw err;
        if (await readMeta(entry, key)) return;
        await this.#remove(key);
      }
    }
  }

  /** The entry's meta, or null on a miss; an entry without a readable meta.json is removed. */
  async #readEntry(key: string): Promise<Meta | null> {
    const entry = join(this.#root, key);
    if (!(await exists(entry))) return null;
    const meta = await readMeta(entry, key);
    if (!meta) await this.#remove(key);
    return meta;
  }

  /** Rewrites meta.json with lastUsedAt = now (temp file and rename, so a reader never sees half of it). */
  async #touch(key: string, meta: Meta): Promise<void> {
    const entry = join(this.#root, key);
    const next: Meta = { ...meta, lastUsedAt: this.#now().toISOString() };
    const tmp = join(entry, `.${META}.${randomUUID()}`);
    try {
      await writeFile(tmp, JSON.stringify(next), { mode: 0o600 });
      await rename(tmp, join(entry, META));
    } catch {
      // Evicted meanwhile: nothing to touch.
      await rm(tmp, { force: true });
    }
  }

  /** Moves the entry aside in one rename, then deletes it, so `<root>/<key>` is always whole or absent. */
  async #remove(key: string): Promise<void> {
    const trash = join(this.#root, `.trash-${randomUUID()}`);
    try {
      await rename(join(this.#root, key), trash);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      throw err;
    }
    await rm(trash, { recursive: true, force: true });
  }

  /** Deletes `.tmp-*` and `.trash-*` folders not modified for LEFTOVER_MS: what a killed worker left. */
  async #sweepLeftovers(): Promise<void> {
    const names = await readdir(this.#root).catch(() => [] as string[]);
    const before = this.#now().getTime() - LEFTOVER_MS;
    for (const name of names.filter((n) => LEFTOVER.test(n))) {
      const st = await lstat(join(this.#root, name)).catch(() => null);
      if (st && st.mtimeMs < before) await rm(join(this.#root, name), { recursive: true, force: true });
    }
  }

  /** Evicts oldest-used entries (other than `keep`) until the total is within maxBytes; returns their keys. */
  async #evict(keep: string): Promise<string[]> {
    const metas: Meta[] = [];
    for (const key of await this.#keys()) {
      const meta = await readMeta(join(this.#root, key), key);
      if (meta) metas.push(meta);
      else await this.#remove(key);
    }
    let total = metas.reduce((n, m) => n + m.bytes, 0);
    const order = metas
      .filter((m) => m.key !== keep)
      .sort(
        (a, b) =>
          Date.parse(a.lastUsedAt) - Date.parse(b.lastUsedAt) ||
          Date.parse(a.createdAt) - Date.parse(b.createdAt) ||
          compare(a.key, b.key),
      );
    const evicted: string[] = [];
    for (const m of order) {
      if (total <= this.#maxBytes) break;
      await this.#remove(m.key);
      total -= m.bytes;
      evicted.push(m.key);
    }
    return evicted;
  }

  async #keys(): Promise<string[]> {
    const names = await readdir(this.#root).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return [] as string[];
      throw err;
    });
    return names.filter((n) => KEY.test(n));
  }
}
