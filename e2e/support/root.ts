import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root folder, where e2e runs the product's scripts and binaries as processes. */
export const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
