import { type FileData, parseDiff } from "react-diff-view";

export type ParsedPatch = { ok: true; files: FileData[] } | { ok: false; error: string };

/**
 * A git-style unified diff (the worker writes `diff --git a/… b/…` per file) as files and hunks for
 * the diff renderer. A patch cut at the size limit can end mid-hunk: the parser may then refuse it,
 * and the page falls back to the raw text rather than showing nothing.
 */
export function parsePatch(text: string): ParsedPatch {
  if (!text.trim()) return { ok: true, files: [] };
  try {
    return { ok: true, files: parseDiff(text, { nearbySequences: "zip" }) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/** The path a file is shown under: the new path, or the old one for a deletion. */
export function filePath(file: Pick<FileData, "type" | "oldPath" | "newPath">): string {
  if (file.type === "delete") return file.oldPath;
  if (file.type === "rename" || file.type === "copy") return `${file.oldPath} → ${file.newPath}`;
  return file.newPath;
}

export function fileStats(file: Pick<FileData, "hunks">): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const h of file.hunks)
    for (const c of h.changes) {
      if (c.type === "insert") added++;
      else if (c.type === "delete") removed++;
    }
  return { added, removed };
}
