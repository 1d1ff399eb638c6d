/**
 * Whether ChangeSets can be composed at all (spec: checkCompatibility, deterministic): one deleting
 * a file another adds or edits cannot be composed; several editing one file can be tried (the
 * merge decides); disjoint ChangeSets are fine.
 */
export type FileChangeKind = "add" | "modify" | "delete";

export interface ComposableChangeSet {
  id: string;
  files: { path: string; kind: FileChangeKind }[];
}

export interface Compatibility {
  status: "ok" | "shared_file" | "incompatible";
  shared: string[];
  conflicts: { path: string; changeSets: string[]; reason: string }[];
}

export function checkCompatibility(changeSets: readonly ComposableChangeSet[]): Compatibility {
  const byPath = new Map<string, { id: string; kind: FileChangeKind }[]>();
  for (const cs of changeSets)
    for (const f of cs.files) byPath.set(f.path, [...(byPath.get(f.path) ?? []), { id: cs.id, kind: f.kind }]);
  const shared: string[] = [];
  const conflicts: Compatibility["conflicts"] = [];
  for (const [path, touches] of [...byPath].sort(([a], [b]) => a.localeCompare(b))) {
    if (new Set(touches.map((t) => t.id)).size < 2) continue;
    const deletes = touches.filter((t) => t.kind === "delete");
    const others = touches.filter((t) => t.kind !== "delete");
    if (deletes.length && others.length) {
      conflicts.push({
        path,
        changeSets: [...new Set(touches.map((t) => t.id))],
        reason: `deleted by ${deletes.map((d) => d.id).join(", ")} and changed by ${others.map((o) => o.id).join(", ")}`,
      });
    } else shared.push(path);
  }
  return { status: conflicts.length ? "incompatible" : shared.length ? "shared_file" : "ok", shared, conflicts };
}
