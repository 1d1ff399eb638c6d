import { readFileSync } from "node:fs";
import { parseChecksFile } from "./checks-file.ts";
import type { ProjectChecks } from "./plan.ts";

/**
 * For tests of the plan, the gate and the policy: the demo shop's own checks file
 * (templates/shop/.rhumbatron/checks.yml) as the worker would read it at a base commit.
 */
export function shopChecks(commit = "0".repeat(40)): ProjectChecks {
  const path = new URL("../../../../templates/shop/.rhumbatron/checks.yml", import.meta.url);
  const r = parseChecksFile(readFileSync(path, "utf8"));
  if (!r.ok) throw new Error(`the shop's checks file does not parse: ${JSON.stringify(r.problems)}`);
  return { source: { kind: "file", path: ".rhumbatron/checks.yml", commit }, file: r.file };
}
