import { existsSync } from "node:fs";
import { join } from "node:path";

/** Loads the repository's .env (if any) into process.env; variables already set win. */
export function loadEnvFile(root: string): void {
  const file = join(root, ".env");
  if (existsSync(file)) process.loadEnvFile(file);
}
