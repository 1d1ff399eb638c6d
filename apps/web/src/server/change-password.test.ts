import { resolveCaller } from "@rhumbatron/api";
import { authFor, authUrl, cookieFrom, emailFor, seedTenants, signIn, testSettings } from "@rhumbatron/api/testing";
import { MIN_PASSWORD_LENGTH, publicUrl } from "@rhumbatron/core";
import { setUserPassword } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { changePassword } from "../lib/auth-client.ts";

/**
 * Changing your own password (the account page) through better-auth's real HTTP handler: the
 * current password is checked, the configured minimum applies, and every other session ends.
 */
const t = useTestDatabase();
const ORIGIN = publicUrl(testSettings());
const EMAIL = emailFor("member");
const USER = "usr_acme_member";

beforeAll(async () => {
  await seedTenants(t.db);
  await setUserPassword(t.db, USER, "first-password");
});
afterEach(() => vi.unstubAllGlobals());

function postChange(cookie: string | null, body: unknown, origin = ORIGIN): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json", origin };
  if (cookie !== null) headers.cookie = cookie;
  return authFor(t.db).handler(
    new Request(authUrl("/change-password"), { method: "POST", headers, body: JSON.stringify(body) }),
  );
}

async function signedIn(password: string): Promise<string> {
  const res = await signIn(t.db, EMAIL, password);
  expect(res.status).toBe(200);
  return cookieFrom(res);
}

const who = async (cookie: string) =>
  (await resolveCaller(t.db, new Headers({ cookie }), { auth: authFor }))?.userId ?? null;
const storedHash = async () => (await t.db.account.findFirstOrThrow({ where: { userId: USER } })).password;

describe("better-auth's change-password endpoint", () => {
  it("refuses a wrong current password, a short new one, no session and another origin, changing nothing", async () => {
    const cookie = await signedIn("first-password");
    const hash = await storedHash();
    const refusals: [Response, number, string | undefined][] = [
      [
        await postChange(cookie, { currentPassword: "wrong-password", newPassword: "a-new-password-2" }),
        400,
        "INVALID_PASSWORD",
      ],
      [
        await postChange(cookie, {
          currentPassword: "first-password",
          newPassword: "x".repeat(MIN_PASSWORD_LENGTH - 1),
        }),
        400,
        "PASSWORD_TOO_SHORT",
      ],
      [await postChange(null, { currentPassword: "first-password", newPassword: "a-new-password-2" }), 401, undefined],
      [
        await postChange(
          cookie,
          { currentPassword: "first-password", newPassword: "a-new-password-2" },
          "https://evil.example",
        ),
        403,
        undefined,
      ],
    ];
    for (const [res, status, code] of refusals) {
      expect(res.status).toBe(status);
      if (code) expect(((await res.json()) as { code?: string }).code).toBe(code);
    }
    expect(await storedHash()).toBe(hash);
    expect(await who(cookie)).toBe(USER);
  });

  it("with the right current password: the new one signs in, the old one does not, and only this browser stays signed in", async () => {
    const here = await signedIn("first-password");
    const elsewhere = await signedIn("first-password");
    const res = await postChange(here, {
      currentPassword: "first-password",
      newPassword: "correct horse battery",
      revokeOtherSessions: true,
    });
    expect(res.status).toBe(200);
    // This browser gets a fresh session cookie; the other browser's session is gone.
    const fresh = cookieFrom(res);
    expect(await who(fresh)).toBe(USER);
    expect(await who(elsewhere)).toBeNull();
    expect(await t.db.session.count({ where: { userId: USER } })).toBe(1);

    expect((await signIn(t.db, EMAIL, "first-password")).status).toBe(401);
    expect((await signIn(t.db, EMAIL, "correct horse battery")).status).toBe(200);
  });
});

describe("the account page's changePassword (lib/auth-client) against the real handler", () => {
  /** The browser's fetch, as this signed-in browser: same origin, the session cookie attached. */
  function browserAs(cookie: string | null) {
    vi.stubGlobal("fetch", (input: string, init: RequestInit) => {
      const headers = new Headers(init.headers);
      headers.set("origin", ORIGIN);
      if (cookie) headers.set("cookie", cookie);
      return authFor(t.db).handler(new Request(new URL(input, ORIGIN), { ...init, headers }));
    });
  }

  it("says which mistake was made, and succeeds with the right current password", async () => {
    browserAs(await signedIn("correct horse battery"));
    expect(await changePassword("not my password", "another-long-password")).toEqual({
      ok: false,
      message: "Your current password is not correct.",
    });
    expect(await changePassword("correct horse battery", "short")).toEqual({
      ok: false,
      message: `The new password needs at least ${MIN_PASSWORD_LENGTH} characters.`,
    });
    expect(await changePassword("correct horse battery", "another-long-password")).toEqual({ ok: true });
    expect((await signIn(t.db, EMAIL, "another-long-password")).status).toBe(200);

    browserAs(null);
    expect(await changePassword("another-long-password", "yet-another-password")).toEqual({
      ok: false,
      message: "Your session has ended. Sign in again, then retry.",
    });
  });
});
