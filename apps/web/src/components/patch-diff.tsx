"use client";

import { useMemo } from "react";
import { Diff, Hunk } from "react-diff-view";
import "react-diff-view/style/index.css";
import { filePath, fileStats, parsePatch } from "../lib/patch-files.ts";

/**
 * A unified diff rendered file by file with react-diff-view. Falls back to the raw text when the
 * patch cannot be parsed (e.g. one cut at the size limit mid-hunk).
 */
export function PatchDiff({ text, testId = "patch-diff" }: { text: string; testId?: string }) {
  const parsed = useMemo(() => parsePatch(text), [text]);
  if (!parsed.ok) {
    return (
      <div data-testid={testId} data-state="raw">
        <p className="mb-2 text-xs text-amber-800">Shown as text: the patch could not be parsed ({parsed.error}).</p>
        <pre className="max-h-[32rem] overflow-auto rounded bg-slate-900 p-3 font-mono text-xs text-slate-100">
          {text}
        </pre>
      </div>
    );
  }
  if (parsed.files.length === 0) {
    return (
      <p data-testid={testId} data-state="empty" className="text-sm text-slate-500">
        The patch changes no files.
      </p>
    );
  }
  return (
    <div data-testid={testId} data-state="ready" className="space-y-4">
      {parsed.files.map((file) => {
        const stats = fileStats(file);
        const path = filePath(file);
        return (
          <div
            key={`${file.oldPath}:${file.newPath}`}
            data-testid="patch-file"
            className="overflow-hidden rounded border border-slate-200"
          >
            <div className="flex items-center justify-between gap-3 border-b border-slate-200 bg-slate-50 px-3 py-1.5 text-xs">
              <span className="truncate font-mono">{path}</span>
              <span className="shrink-0 font-mono">
                <span className="text-emerald-700">+{stats.added}</span>{" "}
                <span className="text-red-700">−{stats.removed}</span>{" "}
                <span className="text-slate-500">{file.type}</span>
              </span>
            </div>
            {file.hunks.length === 0 ? (
              <p className="px-3 py-2 text-xs text-slate-500">
                {file.isBinary ? "Binary file: not shown." : "No line changes."}
              </p>
            ) : (
              <div className="overflow-x-auto text-xs">
                <Diff viewType="unified" diffType={file.type} hunks={file.hunks}>
                  {(hunks) => hunks.map((hunk) => <Hunk key={hunk.content} hunk={hunk} />)}
                </Diff>
              </div>
            )}
          </div>
        );
      })}
    </div>
  );
}
