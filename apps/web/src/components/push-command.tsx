"use client";

import { useState } from "react";

/**
 * The `git push` command of a project waiting for its push (docs/repositories.md, Pushing into an
 * empty project),
 * shown once right after it was issued: the token is kept nowhere it could be shown again.
 */
export function PushCommand({ access }: { access: { url: string; command: string; expiresAt: Date } }) {
  const [copied, setCopied] = useState(false);
  async function copy() {
    try {
      await navigator.clipboard.writeText(access.command);
      setCopied(true);
      setTimeout(() => setCopied(false), 2_000);
    } catch {
      setCopied(false);
    }
  }
  return (
    <div data-testid="push-command" data-url={access.url} className="w-full space-y-2">
      <p className="text-sm">In your repository, run this to push the checked-out branch; it becomes main as it is:</p>
      <div className="flex items-stretch gap-2">
        <code className="min-w-0 flex-1 overflow-x-auto whitespace-nowrap rounded bg-slate-900 px-3 py-2 font-mono text-xs text-slate-100">
          {access.command}
        </code>
        <button
          type="button"
          data-testid="copy-push-command"
          onClick={() => void copy()}
          className="shrink-0 rounded border border-slate-300 px-2 text-sm hover:bg-slate-100"
        >
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
      <p className="text-xs text-slate-500">
        The token works for one push, until {access.expiresAt.toLocaleString()}. It is shown only now; an admin can
        issue a new one from the project page while the project waits.
      </p>
    </div>
  );
}
