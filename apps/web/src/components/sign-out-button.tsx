"use client";

import { useState } from "react";
import { signOut } from "../lib/auth-client.ts";

/** Ends the session (better-auth deletes it and clears the cookie), then goes to the sign-in page. */
export function SignOutButton() {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function onClick() {
    setPending(true);
    setError(null);
    const result = await signOut();
    if (result.ok) {
      window.location.assign("/sign-in");
      return;
    }
    setError(result.message);
    setPending(false);
  }
  return (
    <span className="inline-flex items-center gap-2">
      {error && (
        <span role="alert" className="text-xs text-red-700">
          {error}
        </span>
      )}
      <button
        type="button"
        data-testid="sign-out"
        onClick={() => void onClick()}
        disabled={pending}
        className="rounded border border-slate-300 px-2 py-1 text-xs whitespace-nowrap text-slate-700 hover:bg-slate-100 disabled:opacity-60"
      >
        {pending ? "Signing out…" : "Sign out"}
      </button>
    </span>
  );
}
