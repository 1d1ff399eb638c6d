import type { ComposeConflict } from "./compose.ts";

// A composition conflict in words, as Evidence, the page and a repair's context show it.

export const CONFLICT_KIND: Record<ComposeConflict["kind"], string> = {
  content: "both changed the same lines",
  delete_edit: "one deleted what another changed",
  add_add: "both added it differently",
  rename: "a rename collides",
  binary: "both changed a binary file",
  mode: "both changed its file mode",
};

/** `src/a.ts: Task b and Task a both changed the same lines` (one line per conflicting path). */
export function describeConflict(c: ComposeConflict): string {
  const others = c.with.map((w) => `Task ${w.taskKey}`);
  const who = others.length ? `Task ${c.taskKey} and ${others.join(", ")}` : `Task ${c.taskKey} and the base`;
  return `${c.path}: ${who}: ${CONFLICT_KIND[c.kind]}`;
}
