"use client";

import { MIN_PASSWORD_LENGTH, passwordChangeProblem } from "@rhumbatron/core";
import { type FormEvent, useState } from "react";
import { changePassword } from "../lib/auth-client.ts";

/**
 * Change your own password: the current one, the new one twice. Mistakes the browser can see (too
 * short, mismatch) are said before anything is sent; better-auth checks the current password and
 * the length again, ends every other session of the user and gives this browser a fresh one.
 */
export function AccountForm() {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const change = {
      currentPassword: String(data.get("currentPassword") ?? ""),
      newPassword: String(data.get("newPassword") ?? ""),
      confirmPassword: String(data.get("confirmPassword") ?? ""),
    };
    setSaved(false);
    const problem = passwordChangeProblem(change);
    if (problem) {
      setError(problem);
      return;
    }
    setPending(true);
    setError(null);
    const result = await changePassword(change.currentPassword, change.newPassword);
    setPending(false);
    if (!result.ok) {
      setError(result.message);
      return;
    }
    form.reset();
    setSaved(true);
  }

  return (
    <form
      data-testid="account-form"
      onSubmit={(e) => void onSubmit(e)}
      noValidate
      className="max-w-md space-y-4 rounded-lg border border-slate-200 bg-white p-6"
    >
      <h2 className="font-semibold">Change your password</h2>
      <PasswordFields />
      {error && (
        <p data-testid="account-error" role="alert" className="rounded bg-red-50 px-3 py-2 text-sm text-red-800">
          {error}
        </p>
      )}
      {saved && (
        <p
          data-testid="account-saved"
          role="status"
          className="rounded bg-emerald-50 px-3 py-2 text-sm text-emerald-900"
        >
          Password changed. Use the new one from now on; any other browser signed in as you has been signed out.
        </p>
      )}
      <button
        type="submit"
        data-testid="change-password-submit"
        disabled={pending}
        className="rounded bg-slate-900 px-3 py-2 text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-60"
      >
        {pending ? "Changing…" : "Change password"}
      </button>
    </form>
  );
}

const INPUT =
  "w-full rounded border border-slate-300 bg-white px-3 py-2 text-sm focus:border-slate-500 focus:outline-none";

/** The current password, the new one and the new one again. */
function PasswordFields() {
  return (
    <>
      <label className="block text-sm">
        <span className="mb-1 block font-medium">Current password</span>
        <input
          data-testid="current-password"
          name="currentPassword"
          type="password"
          autoComplete="current-password"
          className={INPUT}
        />
      </label>
      <label className="block text-sm">
        <span className="mb-1 block font-medium">New password</span>
        <input
          data-testid="new-password"
          name="newPassword"
          type="password"
          autoComplete="new-password"
          aria-describedby="new-password-rule"
          className={INPUT}
        />
        <span id="new-password-rule" className="mt-1 block text-xs text-slate-500">
          At least {MIN_PASSWORD_LENGTH} characters. A few unrelated words make a long password that is easy to
          remember.
        </span>
      </label>
      <label className="block text-sm">
        <span className="mb-1 block font-medium">Confirm new password</span>
        <input
          data-testid="confirm-password"
          name="confirmPassword"
          type="password"
          autoComplete="new-password"
          className={INPUT}
        />
      </label>
    </>
  );
}
