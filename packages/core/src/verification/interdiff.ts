/**
 * What changed for an approver since they last approved a Candidate of the same Change
 * (docs/landing.md, "Approve again"). A recomposed Candidate has a new base and a new tree, so its approval
 * is asked again; this says whether the Change's own diff is still the same and which files the
 * new base changed under it.
 *
 * The Change's own diff is compared by the lines it adds and removes in each file (hunk positions
 * and context are left out: they move whenever the base moves). A file whose added or removed lines
 * differ, or that only one of the two diffs touches, is listed.
 */
export interface OwnDiffComparison {
  unchanged: boolean;
  differingFiles: string[];
}

/** The added and removed lines of each file of a unified git patch, in order. */
export function ownDiffLines(patch: string): Map<string, string[]> {
  const files = new Map<string, string[]>();
  let current: string[] | null = null;
  for (const line of patch.split("\n")) {
    const header = /^diff --git a\/(.+?) b\/(.+)$/.exec(line);
    if (header) {
      const path = header[2] ?? header[1] ?? "";
      current = [];
      files.set(path, current);
      continue;
    }
    if (!current || line.startsWith("+++") || line.startsWith("---")) continue;
    if (line.startsWith("+") || line.startsWith("-")) current.push(line);
    else if (/^(new|deleted) file mode/.test(line) || line.startsWith("Binary files")) current.push(line);
  }
  return files;
}

export function compareOwnDiffs(before: string, after: string): OwnDiffComparison {
  const a = ownDiffLines(before);
  const b = ownDiffLines(after);
  const differingFiles = [...new Set([...a.keys(), ...b.keys()])]
    .filter((path) => (a.get(path) ?? []).join("\n") !== (b.get(path) ?? []).join("\n") || a.has(path) !== b.has(path))
    .sort();
  return { unchanged: differingFiles.length === 0, differingFiles };
}
