/**
 * Whether ChangeSets can be composed at all, deterministically (docs/protocol.md, Composition onto the canonical generation): one deleting
 * a file another adds or edits cannot be composed, unless one builds on the other (a Task that
 * depends on another started from its result, so deleting what it edited is just the next step);
 * several editing one file can be tried (the composition decides); disjoint ChangeSets are fine.
 */
export type FileChangeKind = "add" | "modify" | "delete";

export interface ComposableChangeSet {
  id: string;
  files: { path: string; kind: FileChangeKind }[];
  /** The ChangeSets this one builds on (its Task's dependencies, transitively). */
  builtOn?: readonly string[];
}

export interface Compatibility {
  status: "ok" | "shared_file" | "incompatible";
  shared: string[];
  conflicts: { path: string; changeSets: string[]; reason: string }[];
}

export function checkCompatibility(changeSets: readonly ComposableChangeSet[]): Compatibility {
  const builtOn = new Map(changeSets.map((cs) => [cs.id, new Set(cs.builtOn ?? [])]));
  const related = (a: string, b: string) => builtOn.get(a)?.has(b) || builtOn.get(b)?.has(a);
  const byPath = new Map<string, { id: string; kind: FileChangeKind }[]>();
  for (const cs of changeSets)
    for (const f of cs.files) byPath.set(f.path, [...(byPath.get(f.path) ?? []), { id: cs.id, kind: f.kind }]);
  const shared: string[] = [];
  const conflicts: Compatibility["conflicts"] = [];
  for (const [path, touches] of [...byPath].sort(([a], [b]) => a.localeCompare(b))) {
    if (new Set(touches.map((t) => t.id)).size < 2) continue;
    const deletes = touches.filter((t) => t.kind === "delete");
    const others = touches.filter((t) => t.kind !== "delete");
    if (deletes.some((d) => others.some((o) => o.id !== d.id && !related(d.id, o.id)))) {
      conflicts.push({
        path,
        changeSets: [...new Set(touches.map((t) => t.id))],
        reason: `deleted by ${deletes.map((d) => d.id).join(", ")} and changed by ${others.map((o) => o.id).join(", ")}`,
      });
    } else shared.push(path);
  }
  return { status: conflicts.length ? "incompatible" : shared.length ? "shared_file" : "ok", shared, conflicts };
}
