import { createApiToken, DEMO, revokeApiToken, seedDemo, setUserPassword } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { resolveCaller } from "./caller.ts";
import { handleTrpcRequest } from "./http.ts";
import { ACME, authUrl, cookieFrom, emailFor, OTHER, seedTenants, signIn } from "./testing/fixtures.ts";
import { authFor, testServices } from "./testing/services.ts";

const t = useTestDatabase();
const PASSWORD = "acme-admin-password";
const now = new Date();

beforeAll(async () => {
  await seedTenants(t.db);
  await seedDemo(t.db);
  // The Acme admin also belongs to Other, so "every membership" and "one membership" differ.
  await t.db.membership.create({ data: { tenantId: OTHER.tenantId, userId: "usr_acme_admin", role: "viewer" } });
  await setUserPassword(t.db, "usr_acme_admin", PASSWORD);
});

const token = async (userId: string, tenantId: string, role: "viewer" | "member" | "operator" | "admin") =>
  (await createApiToken(t.db, { tenantId, userId, name: `${role} token`, role }, now)).secret;
const bearer = (secret: string) => new Headers({ authorization: `Bearer ${secret}` });

describe("resolveCaller: the session cookie", () => {
  it("signs in with email + password and resolves the cookie to that user with every membership", async () => {
    const res = await signIn(t.db, emailFor("admin"), PASSWORD);
    expect(res.status).toBe(200);
    const caller = await resolveCaller(t.db, new Headers({ cookie: cookieFrom(res) }), { auth: authFor });
    expect(caller).toMatchObject({ userId: "usr_acme_admin", email: emailFor("admin"), via: "session" });
    expect(caller?.memberships.map((m) => [m.tenantId, m.role])).toEqual([
      [ACME.tenantId, "admin"],
      [OTHER.tenantId, "viewer"],
    ]);
  });

  it("refuses a wrong password and a user without a password, and sets no cookie", async () => {
    for (const [email, password] of [
      [emailFor("admin"), "not-the-password"],
      [emailFor("viewer"), "anything-at-all"],
    ] as const) {
      const res = await signIn(t.db, email, password);
      expect(res.status).toBe(401);
      expect(res.headers.getSetCookie()).toEqual([]);
    }
  });

  it("is nobody after sign-out: the session row is gone", async () => {
    const cookie = cookieFrom(await signIn(t.db, emailFor("admin"), PASSWORD));
    const sessions = await t.db.session.count({ where: { userId: "usr_acme_admin" } });
    const out = await authFor(t.db).handler(
      new Request(authUrl("/sign-out"), {
        method: "POST",
        headers: { cookie, origin: new URL(authUrl("/")).origin, "content-type": "application/json" },
        body: "{}",
      }),
    );
    expect(out.status).toBe(200);
    expect(await t.db.session.count({ where: { userId: "usr_acme_admin" } })).toBe(sessions - 1);
    expect(await resolveCaller(t.db, new Headers({ cookie }), { auth: authFor })).toBeNull();
  });

  it("keeps sign-up closed: nobody can create an account from outside", async () => {
    const users = await t.db.user.count();
    const signUp = await authFor(t.db).handler(
      new Request(authUrl("/sign-up/email"), {
        method: "POST",
        headers: { "content-type": "application/json", origin: new URL(authUrl("/")).origin },
        body: JSON.stringify({ email: "new@x.test", password: "a-long-password", name: "New" }),
      }),
    );
    expect(signUp.status).toBe(400);
    expect(await signUp.json()).toMatchObject({ code: "EMAIL_PASSWORD_SIGN_UP_DISABLED" });
    expect(await t.db.user.count()).toBe(users);
  });

  it("refuses a sign-in posted from another origin (CSRF)", async () => {
    const res = await authFor(t.db).handler(
      new Request(authUrl("/sign-in/email"), {
        method: "POST",
        headers: { "content-type": "application/json", origin: "https://evil.example" },
        body: JSON.stringify({ email: emailFor("admin"), password: PASSWORD }),
      }),
    );
    expect(res.status).toBe(403);
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it("serves tRPC over HTTP to the cookie's user, and 401 without one", async () => {
    const cookie = cookieFrom(await signIn(t.db, emailFor("admin"), PASSWORD));
    const req = (headers: Record<string, string>) => new Request("http://localhost/api/trpc/tenants.mine", { headers });
    const ok = await handleTrpcRequest(req({ cookie }), { db: () => t.db, services: testServices });
    expect(ok.status).toBe(200);
    expect((await ok.json()).result.data.json.map((m: { tenantId: string }) => m.tenantId)).toEqual([
      ACME.tenantId,
      OTHER.tenantId,
    ]);
    expect((await handleTrpcRequest(req({}), { db: () => t.db, services: testServices })).status).toBe(401);
    expect(
      (
        await handleTrpcRequest(req({ cookie: "better-auth.session_token=forged.value" }), {
          db: () => t.db,
          services: testServices,
        })
      ).status,
    ).toBe(401);
  });
});

describe("resolveCaller: API tokens", () => {
  it("acts as the token's user in the token's tenant only, at the token's role", async () => {
    const caller = await resolveCaller(t.db, bearer(await token("usr_acme_admin", ACME.tenantId, "member")), {
      auth: authFor,
    });
    expect(caller).toMatchObject({ userId: "usr_acme_admin", via: "token" });
    expect(caller?.memberships).toEqual([{ tenantId: ACME.tenantId, slug: "acme", name: ACME.name, role: "member" }]);
  });

  it("caps the token's role by the user's current role (a demoted user's admin token is a viewer)", async () => {
    const secret = await token("usr_acme_operator", ACME.tenantId, "operator");
    await t.db.membership.update({
      where: { tenantId_userId: { tenantId: ACME.tenantId, userId: "usr_acme_operator" } },
      data: { role: "viewer" },
    });
    try {
      const caller = await resolveCaller(t.db, bearer(secret), { auth: authFor });
      expect(caller?.memberships.map((m) => m.role)).toEqual(["viewer"]);
    } finally {
      await t.db.membership.update({
        where: { tenantId_userId: { tenantId: ACME.tenantId, userId: "usr_acme_operator" } },
        data: { role: "operator" },
      });
    }
  });

  it("is nobody for a revoked, unknown or malformed token, a user who left the tenant, or another scheme", async () => {
    const revoked = await createApiToken(
      t.db,
      { tenantId: ACME.tenantId, userId: "usr_acme_member", name: "r", role: "member" },
      now,
    );
    await revokeApiToken(t.db, { tenantId: ACME.tenantId, tokenId: revoked.token.id, userId: null }, now);
    // A token whose user is (no longer) a member of its tenant.
    const leaver = await token("usr_loner", ACME.tenantId, "viewer");
    const cases = [
      bearer(revoked.secret),
      bearer(`rbt_${"x".repeat(43)}`),
      bearer("rbt_short"),
      new Headers({ authorization: "Basic dXNlcjpwYXNz" }),
      new Headers({ authorization: "Bearer" }),
      bearer(leaver),
    ];
    for (const headers of cases) expect(await resolveCaller(t.db, headers, { auth: authFor })).toBeNull();
  });

  it("never falls back to the session cookie when a token was offered and failed", async () => {
    const cookie = cookieFrom(await signIn(t.db, emailFor("admin"), PASSWORD));
    const headers = new Headers({ cookie, authorization: `Bearer rbt_${"y".repeat(43)}` });
    expect(await resolveCaller(t.db, headers, { auth: authFor })).toBeNull();
  });
});

describe("resolveCaller: no credentials", () => {
  it("is nobody, even with the seeded demo admin in the database (no local-user fallback)", async () => {
    expect(await t.db.user.findUnique({ where: { id: DEMO.userId } })).not.toBeNull();
    expect(await resolveCaller(t.db, new Headers(), { auth: authFor })).toBeNull();
  });
});
