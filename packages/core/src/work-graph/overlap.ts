/**
 * Resource overlap between what an Event touches and what an active Agent holds (what the causal
 * router, work-graph/router.ts, decides on). Paths compare by whole segments: `src/app` is a prefix of
 * `src/app/main.ts` but not of `src/application.ts`.
 *  - exact: the same path on both sides;
 *  - prefix: one side is a prefix of the other (an Agent's prefix intent covering the path, or the
 *    Event naming a folder the Agent works inside) and nothing is exact;
 *  - none.
 */
export type OverlapKind = "exact" | "prefix" | "none";

export interface HeldResources {
  paths: readonly string[];
  prefixes: readonly string[];
}

const norm = (p: string) => p.replace(/\/+$/, "");

/** Whether `prefix` contains `path` by whole segments (a path contains itself). */
export function pathWithin(path: string, prefix: string): boolean {
  const a = norm(path);
  const b = norm(prefix);
  return a === b || b === "" || a.startsWith(`${b}/`);
}

export interface Overlap {
  kind: OverlapKind;
  pairs: { eventPath: string; agentPath: string }[];
}

export function resourceOverlap(eventPaths: readonly string[], held: HeldResources): Overlap {
  const exact: Overlap["pairs"] = [];
  const prefix: Overlap["pairs"] = [];
  for (const e of eventPaths) {
    for (const p of held.paths) {
      if (norm(e) === norm(p)) exact.push({ eventPath: e, agentPath: p });
      else if (pathWithin(e, p) || pathWithin(p, e)) prefix.push({ eventPath: e, agentPath: p });
    }
    for (const p of held.prefixes) {
      if (pathWithin(e, p) || pathWithin(p, e)) prefix.push({ eventPath: e, agentPath: `${norm(p)}/` });
    }
  }
  if (exact.length) return { kind: "exact", pairs: exact };
  if (prefix.length) return { kind: "prefix", pairs: prefix };
  return { kind: "none", pairs: [] };
}
