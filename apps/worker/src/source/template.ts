import { readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The project template every canonical repository starts from (templates/shop in this repository). */
export const DEFAULT_TEMPLATE_DIR = fileURLToPath(new URL("../../../../templates/shop", import.meta.url));

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
