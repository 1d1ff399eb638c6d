import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { type BlobObject, type BlobStore, DomainError, isValidBlobKey } from "@rhumbatron/core";

/**
 * The default blob store: one file per key under a root folder (default `.data/blobs`), with its
 * metadata in a `.meta.json` file beside it. Writes go to a temporary file and are renamed into
 * place, so a reader never sees half an object.
 */
export function localFolderBlobStore(root: string): BlobStore {
  const base = resolve(root);
  const pathOf = (key: string) => {
    if (!isValidBlobKey(key)) throw new DomainError("INVALID_INPUT", `invalid blob key ${key}`);
    return join(base, ...key.split("/"));
  };
  return {
    async put(key, body, metadata = {}) {
      const file = pathOf(key);
      await mkdir(dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
      await writeFile(`${tmp}.meta`, JSON.stringify(metadata));
      await writeFile(tmp, body);
      await rename(`${tmp}.meta`, `${file}.meta.json`);
      await rename(tmp, file);
    },
    async get(key): Promise<BlobObject | null> {
      const file = pathOf(key);
      try {
        const body = await readFile(file);
        const meta = await readFile(`${file}.meta.json`, "utf8").catch(() => "{}");
        return { body: new Uint8Array(body), metadata: JSON.parse(meta) as Record<string, string> };
      } catch (err) {
        // A folder that only holds other keys is not a key (as in S3).
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "ENOENT" || code === "EISDIR" || code === "ENOTDIR") return null;
        throw err;
      }
    },
    async has(key) {
      const file = pathOf(key);
      try {
        return (await stat(file)).isFile();
      } catch {
        return false;
      }
    },
    async delete(key) {
      const file = pathOf(key);
      await rm(file, { force: true });
      await rm(`${file}.meta.json`, { force: true });
    },
    async list(prefix) {
      // The prefix is a string prefix, as in S3: `events/2024-` walks `events/` and keeps what matches.
      const start = join(base, ...prefix.split("/").slice(0, -1).filter(Boolean));
      const out: string[] = [];
      const walk = async (dir: string) => {
        let entries: import("node:fs").Dirent[];
        try {
          entries = await readdir(dir, { withFileTypes: true });
        } catch {
          return;
        }
        for (const e of entries) {
          const full = join(dir, e.name);
          if (e.isDirectory()) await walk(full);
          else if (!e.name.endsWith(".meta.json") && !e.name.endsWith(".tmp") && !e.name.endsWith(".tmp.meta")) {
            out.push(relative(base, full).split(sep).join("/"));
          }
        }
      };
      await walk(start);
      return out.filter((k) => k.startsWith(prefix)).sort();
    },
  };
}
