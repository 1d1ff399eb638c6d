"use client";

import { type FormEvent, useState } from "react";
import { signInWithPassword } from "../lib/auth-client.ts";

/** Email + password; on success a full navigation to `next`, so the header and page render signed in. */
export function SignInForm({ next }: { next: string }) {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    setError(null);
    const result = await signInWithPassword(String(form.get("email") ?? ""), String(form.get("password") ?? ""));
    if (result.ok) {
      window.location.assign(next);
      return; // stay "pending" until the next page replaces this one
    }
    setError(result.message);
    setPending(false);
  }

  const input =
    "w-full rounded border border-slate-300 bg-white px-3 py-2 text-sm focus:border-slate-500 focus:outline-none";
  return (
    <form
      data-testid="sign-in-form"
      onSubmit={(e) => void onSubmit(e)}
      className="space-y-4 rounded-lg border border-slate-200 bg-white p-6"
    >
      <label className="block text-sm">
        <span className="mb-1 block font-medium">Email</span>
        <input name="email" type="email" autoComplete="username" required className={input} />
      </label>
      <label className="block text-sm">
        <span className="mb-1 block font-medium">Password</span>
        <input name="password" type="password" autoComplete="current-password" required className={input} />
      </label>
      {error && (
        <p data-testid="sign-in-error" role="alert" className="rounded bg-red-50 px-3 py-2 text-sm text-red-800">
          {error}
        </p>
      )}
      <button
        type="submit"
        disabled={pending}
        className="w-full rounded bg-slate-900 px-3 py-2 text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-60"
      >
        {pending ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
