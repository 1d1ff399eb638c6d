"use client";

import { type ReactNode, useState } from "react";

/**
 * A secret shown once (a new API token, a member's temporary password), with Copy and Done. Only its
 * hash is stored, so this is the one chance to read it.
 */
export function SecretShownOnce({
  testId,
  secretTestId,
  secret,
  noun,
  onDone,
  children,
  advice,
}: {
  testId: string;
  secretTestId: string;
  secret: string;
  /** What the secret is, in the clipboard-refused hint: "select the <noun> and copy it by hand". */
  noun: string;
  onDone: () => void;
  /** The sentence that says what was created, before "Copy it now". */
  children: ReactNode;
  /** Optional advice under the secret. */
  advice?: ReactNode;
}) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied("yes");
    } catch {
      setCopied("failed");
    }
  }
  return (
    <div data-testid={testId} className="rounded-lg border border-emerald-300 bg-emerald-50 p-4 text-sm">
      <p className="font-medium text-emerald-900">{children} Copy it now: it is not shown again.</p>
      <div className="mt-2 flex items-center gap-2">
        <code
          data-testid={secretTestId}
          className="min-w-0 flex-1 select-all truncate rounded border border-emerald-200 bg-white px-2 py-1 font-mono text-xs"
        >
          {secret}
        </code>
        <button
          type="button"
          onClick={() => void copy()}
          className="rounded border border-emerald-400 bg-white px-2 py-1 text-emerald-800 hover:bg-emerald-100"
        >
          {copied === "yes" ? "Copied" : "Copy"}
        </button>
        <button type="button" onClick={onDone} className="px-2 py-1 text-emerald-800 hover:underline">
          Done
        </button>
      </div>
      {advice && <p className="mt-2 text-xs text-emerald-900">{advice}</p>}
      {copied === "failed" && (
        <p role="alert" className="mt-2 text-xs text-red-700">
          The browser refused the clipboard; select the {noun} and copy it by hand.
        </p>
      )}
    </div>
  );
}
