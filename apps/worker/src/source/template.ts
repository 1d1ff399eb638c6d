import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The project template every canonical repository starts from (templates/shop in this repository).
 * A plain path join, not `new URL(…, import.meta.url)`, which bundlers treat as an asset to copy.
 */
export const DEFAULT_TEMPLATE_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "..",
  "..",
  "templates",
  "shop",
);

const SKIP = new Set(["node_modules", "dist", ".git"]);

/** The template's files as repository paths -> contents (build output and dependencies left out). */
export async function readTemplate(dir: string = DEFAULT_TEMPLATE_DIR): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (SKIP.has(e.name)) continue;
      const full = join(d, e.name);
      if (e.isDirectory()) await walk(full);
      else if (e.isFile()) files.set(relative(dir, full).split(sep).join("/"), new Uint8Array(await readFile(full)));
    }
  };
  await walk(dir);
  if (files.size === 0) throw new Error(`the project template at ${dir} is empty`);
  return files;
}
