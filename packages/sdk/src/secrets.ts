import type { TenantSecret } from "./client.ts";
import { table } from "./format.ts";

/** `rhumbatron secrets list`: one line per secret, never a value (the API has none to give). */
export function formatSecrets(list: TenantSecret[]): string {
  if (list.length === 0) return "no secrets: set one with rhumbatron secrets set NAME --value-stdin";
  return table([
    ["NAME", "SET AT", "SET BY"],
    ...list.map((s) => [s.name, new Date(s.updatedAt).toISOString(), s.setBy?.email ?? "(a removed user)"]),
  ]);
}
