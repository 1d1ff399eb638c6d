/**
 * The browser's side of sign-in: plain calls to better-auth's endpoints (app/api/auth/[...all]), which
 * set and clear the httpOnly session cookie. Same origin, so the browser's Origin header passes
 * better-auth's origin check.
 */
const AUTH = "/api/auth";

export type AuthResult = { ok: true } | { ok: false; message: string };

async function post(path: string, what: string, body: unknown): Promise<AuthResult> {
  let res: Response;
  try {
    res = await fetch(`${AUTH}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
  } catch {
    return { ok: false, message: "Cannot reach the server. Check your connection and try again." };
  }
  if (res.ok) return { ok: true };
  if (res.status === 429) return { ok: false, message: "Too many attempts. Wait a few seconds and try again." };
  const error = (await res.json().catch(() => null)) as { message?: string } | null;
  return { ok: false, message: error?.message || `${what} failed (HTTP ${res.status}).` };
}

export function signInWithPassword(email: string, password: string): Promise<AuthResult> {
  return post("/sign-in/email", "Sign-in", { email, password });
}

export function signOut(): Promise<AuthResult> {
  return post("/sign-out", "Sign-out", {});
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
