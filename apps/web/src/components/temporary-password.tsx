"use client";

import { type ReactNode, useState } from "react";

/**
 * A generated password shown to an admin once (a new member's, or a reset one), with Copy and Done
 * and the advice on passing it on. Only its hash is stored, so this is the one chance to read it.
 */
export function TemporaryPassword({
  testId,
  passwordTestId,
  password,
  onDone,
  children,
}: {
  testId: string;
  passwordTestId: string;
  password: string;
  onDone: () => void;
  /** The sentence that says whose password this is. */
  children: ReactNode;
}) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(password);
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
          data-testid={passwordTestId}
          className="min-w-0 flex-1 select-all truncate rounded border border-emerald-200 bg-white px-2 py-1 font-mono text-xs"
        >
          {password}
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
      <p className="mt-2 text-xs text-emerald-900">
        Share it safely: tell them directly or through a password manager, not in a shared channel, ticket or the same
        email as their address. Only its hash is stored, so nobody can look it up later. They can choose their own on
        their account page once signed in.
      </p>
      {copied === "failed" && (
        <p role="alert" className="mt-2 text-xs text-red-700">
          The browser refused the clipboard; select the password and copy it by hand.
        </p>
      )}
    </div>
  );
}
