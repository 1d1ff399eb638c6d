import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from "@rhumbatron/core";

/**
 * The browser's side of sign-in: plain calls to better-auth's endpoints (app/api/auth/[...all]), which
 * set and clear the httpOnly session cookie. Same origin, so the browser's Origin header passes
 * better-auth's origin check.
 */
const AUTH = "/api/auth";

export type AuthResult = { ok: true } | { ok: false; message: string };

type Failure = { ok: false; message: string; status: number; code?: string };

async function post(path: string, what: string, body: unknown): Promise<{ ok: true } | Failure> {
  let res: Response;
  try {
    res = await fetch(`${AUTH}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
  } catch {
    return { ok: false, status: 0, message: "Cannot reach the server. Check your connection and try again." };
  }
  if (res.ok) return { ok: true };
  const error = (await res.json().catch(() => null)) as { message?: string; code?: string } | null;
  if (res.status === 429) {
    // The server says how long to wait (the sign-in limit); a bare 429 gets the general advice.
    return {
      ok: false,
      status: 429,
      message: error?.message || "Too many attempts. Wait a few seconds and try again.",
    };
  }
  return {
    ok: false,
    status: res.status,
    code: error?.code,
    message: error?.message || `${what} failed (HTTP ${res.status}).`,
  };
}

export function signInWithPassword(email: string, password: string): Promise<AuthResult> {
  return post("/sign-in/email", "Sign-in", { email, password });
}

export function signOut(): Promise<AuthResult> {
  return post("/sign-out", "Sign-out", {});
}

/** better-auth's error codes for a password change, said the way the account page's user needs them. */
const CHANGE_PASSWORD_MESSAGES: Record<string, string> = {
  INVALID_PASSWORD: "Your current password is not correct.",
  PASSWORD_TOO_SHORT: `The new password needs at least ${MIN_PASSWORD_LENGTH} characters.`,
  PASSWORD_TOO_LONG: `The new password can have at most ${MAX_PASSWORD_LENGTH} characters.`,
  CREDENTIAL_ACCOUNT_NOT_FOUND: "Your account has no password to change; ask an admin to reset it.",
};

/**
 * Changes the signed-in user's password (better-auth's change-password, which checks the current
 * one). Every other session of the user ends; this browser gets a fresh session cookie.
 */
export async function changePassword(currentPassword: string, newPassword: string): Promise<AuthResult> {
  const result = await post("/change-password", "Changing the password", {
    currentPassword,
    newPassword,
    revokeOtherSessions: true,
  });
  if (result.ok) return result;
  if (result.status === 401) return { ok: false, message: "Your session has ended. Sign in again, then retry." };
  return { ok: false, message: (result.code && CHANGE_PASSWORD_MESSAGES[result.code]) || result.message };
}

/**
 * Where to go after signing in: a path on this site only (never `//host` or a full URL, so the
 * sign-in page cannot be used to send people elsewhere), and never back to /sign-in.
 */
export function safeNextPath(next: string | null | undefined): string {
  if (!next?.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) return "/";
  if (next === "/sign-in" || next.startsWith("/sign-in?") || next.startsWith("/sign-in/")) return "/";
  return next;
}
