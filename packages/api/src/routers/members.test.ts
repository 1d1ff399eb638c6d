import { createApiToken, setUserPassword } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { resolveCaller } from "../caller.ts";
import {
  ACME,
  callerAs,
  callerWith,
  cookieFrom,
  emailFor,
  LONER_EMAIL,
  OTHER,
  OUTSIDER_EMAIL,
  ROLES,
  seedTenants,
  signIn,
} from "../testing/fixtures.ts";
import { authFor } from "../testing/services.ts";

const t = useTestDatabase();
beforeAll(async () => seedTenants(t.db));

const tenantId = ACME.tenantId;
const admin = () => callerAs(t.db, emailFor("admin"));

/** Rows of the tables these procedures write, to prove a refused call wrote nothing. */
async function snapshot() {
  return {
    users: await t.db.user.findMany({ orderBy: { id: "asc" } }),
    memberships: await t.db.membership.findMany({ orderBy: [{ tenantId: "asc" }, { userId: "asc" }] }),
    accounts: await t.db.account.findMany({ orderBy: { id: "asc" } }),
    sessions: await t.db.session.findMany({ orderBy: { id: "asc" } }),
    tokens: await t.db.apiToken.findMany({ orderBy: { id: "asc" } }),
  };
}

describe("members.list", () => {
  it("shows an admin every member of the tenant with email, name, role and when they joined, and nobody else's", async () => {
    const members = await admin().members.list({ tenantId });
    expect(members.map((m) => [m.email, m.role])).toEqual(
      [...ROLES].sort((a, b) => emailFor(a).localeCompare(emailFor(b))).map((r) => [emailFor(r), r]),
    );
    expect(members[0]).toMatchObject({ userId: expect.stringMatching(/^usr_/), name: expect.any(String) });
    expect(members[0]?.joinedAt).toBeInstanceOf(Date);
    expect(members.some((m) => m.email === OUTSIDER_EMAIL)).toBe(false);
  });
});

describe("members.add", () => {
  it("creates a new user with a temporary password, shown once, that really signs in", async () => {
    const added = await admin().members.add({
      tenantId,
      email: "  New.Person@Acme.TEST ",
      name: " New Person ",
      role: "viewer",
    });
    expect(added.member).toMatchObject({ email: "new.person@acme.test", name: "New Person", role: "viewer" });
    const password = added.temporaryPassword ?? "";
    expect(password.length).toBeGreaterThanOrEqual(16);
    const account = await t.db.account.findFirstOrThrow({ where: { userId: added.member.userId } });
    expect(account.password).not.toContain(password);

    // Through better-auth's real sign-in endpoint, with the address as the person would type it.
    const res = await signIn(t.db, "new.person@acme.test", password);
    expect(res.status).toBe(200);
    const caller = await resolveCaller(t.db, new Headers({ cookie: cookieFrom(res) }), { auth: authFor });
    expect(caller?.memberships.map((m) => [m.tenantId, m.role])).toEqual([[tenantId, "viewer"]]);
    expect((await signIn(t.db, "new.person@acme.test", "not-the-password")).status).toBe(401);
    expect(await callerAs(t.db, "new.person@acme.test").projects.list({ tenantId })).toHaveLength(2);
  });

  it("adds an existing user without touching their name or password", async () => {
    const before = await t.db.user.findUniqueOrThrow({ where: { email: LONER_EMAIL } });
    const added = await admin().members.add({ tenantId, email: LONER_EMAIL, name: "Renamed", role: "member" });
    expect(added.temporaryPassword).toBeNull();
    expect(added.member).toMatchObject({ userId: before.id, name: "Loner", role: "member" });
    expect(await t.db.account.count({ where: { userId: before.id } })).toBe(0);
    expect(await t.db.user.findUniqueOrThrow({ where: { id: before.id } })).toEqual(before);
  });

  it("is CONFLICT for someone already in the tenant, whatever the case of the address, writing nothing", async () => {
    const before = await snapshot();
    for (const email of [emailFor("viewer"), "MEMBER@acme.test"]) {
      await expect(admin().members.add({ tenantId, email, name: "Again", role: "admin" })).rejects.toMatchObject({
        code: "CONFLICT",
      });
    }
    expect(await snapshot()).toEqual(before);
  });

  it("refuses a malformed address, a blank or too long name and an unknown role", async () => {
    const bad = [
      { email: "not-an-email", name: "X", role: "viewer" },
      { email: "x@acme.test", name: "  ", role: "viewer" },
      { email: "x@acme.test", name: "x".repeat(101), role: "viewer" },
      { email: "x@acme.test", name: "X", role: "owner" },
    ] as const;
    for (const input of bad) {
      await expect(
        admin().members.add({ tenantId, ...(input as unknown as { email: string; name: string; role: "viewer" }) }),
      ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    }
    expect(await t.db.user.count({ where: { email: "x@acme.test" } })).toBe(0);
  });
});

describe("members.setRole", () => {
  it("changes a role, and setting the same role again writes nothing", async () => {
    const { id: userId } = await t.db.user.findUniqueOrThrow({ where: { email: emailFor("member") } });
    const changed = await admin().members.setRole({ tenantId, userId, role: "approver" });
    expect(changed).toMatchObject({ changed: true, member: { role: "approver" } });
    const xmin = () =>
      t.db.$queryRaw<
        { xmin: string }[]
      >`SELECT xmin::text FROM memberships WHERE tenant_id = ${tenantId} AND user_id = ${userId}`;
    const version = await xmin();
    expect(await admin().members.setRole({ tenantId, userId, role: "approver" })).toMatchObject({ changed: false });
    expect(await xmin()).toEqual(version);
    await admin().members.setRole({ tenantId, userId, role: "member" });
  });

  it("is NOT_FOUND for someone who is not a member of this tenant", async () => {
    await expect(admin().members.setRole({ tenantId, userId: "usr_other", role: "viewer" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});

describe("the last admin", () => {
  it("cannot be demoted or removed, by themselves or anyone, until someone else is admin", async () => {
    const adminId = "usr_acme_admin";
    const before = await snapshot();
    await expect(admin().members.setRole({ tenantId, userId: adminId, role: "operator" })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining("make someone else admin first"),
    });
    await expect(admin().members.remove({ tenantId, userId: adminId })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining("You are the last admin"),
    });
    expect(await snapshot()).toEqual(before);

    // With a second admin, the first may step down; then the second is the last one.
    await admin().members.setRole({ tenantId, userId: "usr_acme_operator", role: "admin" });
    expect(await admin().members.setRole({ tenantId, userId: adminId, role: "operator" })).toMatchObject({
      changed: true,
    });
    const second = callerAs(t.db, emailFor("operator"));
    await expect(second.members.remove({ tenantId, userId: "usr_acme_operator" })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
    // The former admin lost the role with the change: refused at once.
    await expect(admin().members.list({ tenantId })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await second.members.setRole({ tenantId, userId: adminId, role: "admin" });
    await second.members.setRole({ tenantId, userId: "usr_acme_operator", role: "operator" });
    expect((await admin().members.list({ tenantId })).filter((m) => m.role === "admin")).toHaveLength(1);
  });
});

describe("members.remove", () => {
  it("takes the user out of the tenant, revokes their tokens there only, and keeps the user", async () => {
    const added = await admin().members.add({ tenantId, email: "leaver@acme.test", name: "Leaver", role: "member" });
    const userId = added.member.userId;
    await t.db.membership.create({ data: { tenantId: OTHER.tenantId, userId, role: "viewer" } });
    const now = new Date();
    const here = await createApiToken(t.db, { tenantId, userId, name: "here", role: "member" }, now);
    const there = await createApiToken(t.db, { tenantId: OTHER.tenantId, userId, name: "there", role: "viewer" }, now);

    expect(await admin().members.remove({ tenantId, userId })).toEqual({ userId, revokedTokens: 1 });
    expect((await admin().members.list({ tenantId })).some((m) => m.userId === userId)).toBe(false);
    expect((await t.db.apiToken.findUniqueOrThrow({ where: { id: here.token.id } })).revokedAt).not.toBeNull();
    expect((await t.db.apiToken.findUniqueOrThrow({ where: { id: there.token.id } })).revokedAt).toBeNull();
    expect(await t.db.user.count({ where: { id: userId } })).toBe(1);
    await expect(callerAs(t.db, "leaver@acme.test").projects.list({ tenantId })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(
      callerWith(t.db, { authorization: `Bearer ${here.secret}` }).projects.list({ tenantId }),
    ).rejects.toMatchObject({ code: "UNAUTHORIZED" });

    // Removed already: NOT_FOUND, and a later add brings them back without a new password.
    await expect(admin().members.remove({ tenantId, userId })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(
      (await admin().members.add({ tenantId, email: "leaver@acme.test", name: "L", role: "viewer" })).temporaryPassword,
    ).toBeNull();
  });
});

describe("members.resetPassword", () => {
  it("gives a member a temporary password that signs in, ends their sessions, and the old password stops working", async () => {
    const added = await admin().members.add({
      tenantId,
      email: "forgetful@acme.test",
      name: "Forgetful",
      role: "member",
    });
    const userId = added.member.userId;
    const oldPassword = added.temporaryPassword ?? "";
    const oldSession = cookieFrom(await signIn(t.db, "forgetful@acme.test", oldPassword));
    expect((await resolveCaller(t.db, new Headers({ cookie: oldSession }), { auth: authFor }))?.userId).toBe(userId);
    const token = await createApiToken(t.db, { tenantId, userId, name: "ci", role: "member" }, new Date());
    const adminSessions = await t.db.session.count({ where: { userId: { not: userId } } });

    const reset = await admin().members.resetPassword({ tenantId, userId });
    expect(reset).toMatchObject({ userId, email: "forgetful@acme.test", endedSessions: 1 });
    expect(reset.temporaryPassword.length).toBeGreaterThanOrEqual(16);
    expect(reset.temporaryPassword).not.toBe(oldPassword);

    // The browser signed in with the old password is signed out; nobody else's session is touched.
    expect(await resolveCaller(t.db, new Headers({ cookie: oldSession }), { auth: authFor })).toBeNull();
    expect(await t.db.session.count({ where: { userId } })).toBe(0);
    expect(await t.db.session.count({ where: { userId: { not: userId } } })).toBe(adminSessions);
    // Through better-auth's real sign-in endpoint: the old password is refused, the new one signs in.
    expect((await signIn(t.db, "forgetful@acme.test", oldPassword)).status).toBe(401);
    const res = await signIn(t.db, "forgetful@acme.test", reset.temporaryPassword);
    expect(res.status).toBe(200);
    expect((await resolveCaller(t.db, new Headers({ cookie: cookieFrom(res) }), { auth: authFor }))?.userId).toBe(
      userId,
    );
    // Only the hash is stored; their API token is a credential of its own and still works.
    const account = await t.db.account.findFirstOrThrow({ where: { userId } });
    expect(account.password).not.toContain(reset.temporaryPassword);
    expect(
      await callerWith(t.db, { authorization: `Bearer ${token.secret}` }).projects.list({ tenantId }),
    ).toHaveLength(2);
  });

  it("refuses the admin's own account (the account page is for that), writing nothing", async () => {
    await setUserPassword(t.db, "usr_acme_admin", "the-admins-own-password");
    const session = cookieFrom(await signIn(t.db, emailFor("admin"), "the-admins-own-password"));
    const before = await snapshot();
    await expect(admin().members.resetPassword({ tenantId, userId: "usr_acme_admin" })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining("/settings/account"),
    });
    expect(await snapshot()).toEqual(before);
    expect(await resolveCaller(t.db, new Headers({ cookie: session }), { auth: authFor })).not.toBeNull();
  });

  it("refuses a member who also belongs to another tenant, writing nothing", async () => {
    const added = await admin().members.add({ tenantId, email: "shared@acme.test", name: "Shared", role: "viewer" });
    const userId = added.member.userId;
    await t.db.membership.create({ data: { tenantId: OTHER.tenantId, userId, role: "viewer" } });
    const session = cookieFrom(await signIn(t.db, "shared@acme.test", added.temporaryPassword ?? ""));
    const before = await snapshot();
    await expect(admin().members.resetPassword({ tenantId, userId })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: "shared@acme.test also belongs to another tenant; ask them to change it on their account page",
    });
    expect(await snapshot()).toEqual(before);
    expect(await resolveCaller(t.db, new Headers({ cookie: session }), { auth: authFor })).not.toBeNull();
    expect((await signIn(t.db, "shared@acme.test", added.temporaryPassword ?? "")).status).toBe(200);
  });

  it("is NOT_FOUND for someone who is not a member of this tenant", async () => {
    const before = await snapshot();
    for (const userId of ["usr_other", "usr_nobody"]) {
      await expect(admin().members.resetPassword({ tenantId, userId })).rejects.toMatchObject({ code: "NOT_FOUND" });
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe("who may administer members", () => {
  it("refuses every role below admin, and another tenant's admin, with nothing written", async () => {
    const before = await snapshot();
    const targetId = "usr_acme_viewer";
    const callers = [...ROLES.filter((r) => r !== "admin").map(emailFor), OUTSIDER_EMAIL];
    for (const email of callers) {
      const c = callerAs(t.db, email);
      for (const attempt of [
        () => c.members.list({ tenantId }),
        () => c.members.add({ tenantId, email: "sneaky@acme.test", name: "Sneaky", role: "admin" }),
        () => c.members.setRole({ tenantId, userId: targetId, role: "admin" }),
        () => c.members.remove({ tenantId, userId: targetId }),
        () => c.members.resetPassword({ tenantId, userId: targetId }),
      ]) {
        await expect(attempt(), email).rejects.toMatchObject({ code: "FORBIDDEN" });
      }
    }
    // Another tenant's admin naming Acme's member from their own tenant finds nobody.
    const outsider = callerAs(t.db, OUTSIDER_EMAIL);
    await expect(
      outsider.members.setRole({ tenantId: OTHER.tenantId, userId: targetId, role: "admin" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(outsider.members.remove({ tenantId: OTHER.tenantId, userId: targetId })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(outsider.members.resetPassword({ tenantId: OTHER.tenantId, userId: targetId })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect(await snapshot()).toEqual(before);
  });

  it("refuses an admin's token capped below admin", async () => {
    const { secret } = await createApiToken(
      t.db,
      { tenantId, userId: "usr_acme_admin", name: "capped", role: "operator" },
      new Date(),
    );
    await expect(
      callerWith(t.db, { authorization: `Bearer ${secret}` }).members.list({ tenantId }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
  });
});
