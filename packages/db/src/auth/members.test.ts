import { verifyPassword } from "better-auth/crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase, waitForLockWaiter } from "../testing/index.ts";
import { createApiToken } from "./api-tokens.ts";
import { addMember, listMembers, removeMember, resetMemberPassword, setMemberRole } from "./members.ts";
import { seedPeople } from "./testing.ts";

const t = useTestDatabase();
const at = (s: number) => new Date(Date.UTC(2026, 10, 29, 12, 0, s));

const seed = () =>
  seedPeople(t.db, [
    ["Ann", "a", "admin"],
    ["Bea", "a", "admin"],
    ["Cid", "b", "admin"],
  ]);

describe("tenant members", () => {
  it("adds a new address as a user with a hashed temporary password, in the lower case better-auth looks up", async () => {
    await seed();
    const added = await addMember(t.db, "ten_a", { email: "Dee@A.test", name: "Dee", role: "member" }, "usr_ann");
    expect(added.member).toMatchObject({ email: "dee@a.test", name: "Dee", role: "member" });
    const account = await t.db.account.findFirstOrThrow({ where: { userId: added.member.userId } });
    expect(await verifyPassword({ hash: account.password ?? "", password: added.temporaryPassword ?? "" })).toBe(true);
    expect((await listMembers(t.db, "ten_a")).map((m) => m.email)).toEqual(["ann@a.test", "bea@a.test", "dee@a.test"]);
  });

  it("refuses anyone who is not (or no longer) an admin of the tenant, even when called directly", async () => {
    await expect(
      addMember(t.db, "ten_a", { email: "eve@a.test", name: "Eve", role: "admin" }, "usr_cid"),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    const dee = (await t.db.user.findUniqueOrThrow({ where: { email: "dee@a.test" } })).id;
    await expect(setMemberRole(t.db, "ten_a", "usr_ann", "viewer", dee)).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await t.db.user.count({ where: { email: "eve@a.test" } })).toBe(0);
  });

  it("keeps one admin when two admins demote each other at the same moment", async () => {
    const outcomes = await Promise.allSettled([
      setMemberRole(t.db, "ten_a", "usr_bea", "member", "usr_ann"),
      setMemberRole(t.db, "ten_a", "usr_ann", "member", "usr_bea"),
    ]);
    // The second to take the tenant's lock finds its actor no longer admin (or the last admin): refused.
    expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(await t.db.membership.count({ where: { tenantId: "ten_a", role: "admin" } })).toBe(1);
    const admin = await t.db.membership.findFirstOrThrow({ where: { tenantId: "ten_a", role: "admin" } });
    const other = admin.userId === "usr_ann" ? "usr_bea" : "usr_ann";
    await setMemberRole(t.db, "ten_a", other, "admin", admin.userId);
  });

  it("revokes the removed member's live tokens for this tenant in the same transaction, keeping earlier revocations", async () => {
    await t.db.membership.create({ data: { tenantId: "ten_b", userId: "usr_bea", role: "viewer" } });
    const live = await createApiToken(
      t.db,
      { tenantId: "ten_a", userId: "usr_bea", name: "live", role: "admin" },
      at(0),
    );
    const old = await createApiToken(
      t.db,
      { tenantId: "ten_a", userId: "usr_bea", name: "old", role: "viewer" },
      at(0),
    );
    await t.db.apiToken.update({ where: { id: old.token.id }, data: { revokedAt: at(1) } });
    const elsewhere = await createApiToken(
      t.db,
      { tenantId: "ten_b", userId: "usr_bea", name: "b", role: "viewer" },
      at(0),
    );

    expect(await removeMember(t.db, "ten_a", "usr_bea", "usr_ann", at(5))).toEqual({
      userId: "usr_bea",
      revokedTokens: 1,
    });
    const revokedAt = async (id: string) => (await t.db.apiToken.findUniqueOrThrow({ where: { id } })).revokedAt;
    expect(await revokedAt(live.token.id)).toEqual(at(5));
    expect(await revokedAt(old.token.id)).toEqual(at(1));
    expect(await revokedAt(elsewhere.token.id)).toBeNull();
    await expect(removeMember(t.db, "ten_a", "usr_bea", "usr_ann", at(6))).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("lets the last admin neither leave nor step down", async () => {
    await expect(removeMember(t.db, "ten_a", "usr_ann", "usr_ann", at(7))).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringMatching(/^You are the last admin.*make someone else admin first/),
    });
    await expect(setMemberRole(t.db, "ten_a", "usr_ann", "operator", "usr_ann")).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
    expect(
      await t.db.membership.findUniqueOrThrow({ where: { tenantId_userId: { tenantId: "ten_a", userId: "usr_ann" } } }),
    ).toMatchObject({ role: "admin" });
  });
});

describe("resetting a member's password", () => {
  const passwordOf = async (userId: string) =>
    (await t.db.account.findFirstOrThrow({ where: { userId, providerId: "credential" } })).password ?? "";
  const session = (id: string, userId: string) =>
    t.db.session.create({ data: { id, userId, token: `tok_${id}`, expiresAt: at(59) } });

  it("stores a new generated password and ends that user's sessions only", async () => {
    const dee = (await t.db.user.findUniqueOrThrow({ where: { email: "dee@a.test" } })).id;
    await session("ses_dee_1", dee);
    await session("ses_dee_2", dee);
    await session("ses_ann_1", "usr_ann");
    const before = await passwordOf(dee);

    const reset = await resetMemberPassword(t.db, "ten_a", dee, "usr_ann");
    expect(reset).toMatchObject({ userId: dee, email: "dee@a.test", endedSessions: 2 });
    expect(reset.temporaryPassword).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const after = await passwordOf(dee);
    expect(after).not.toBe(before);
    expect(await verifyPassword({ hash: after, password: reset.temporaryPassword })).toBe(true);
    expect((await t.db.session.findMany({ select: { id: true } })).map((x) => x.id)).toEqual(["ses_ann_1"]);
  });

  it("is refused once another tenant adds the user while the reset waits for it, writing nothing", async () => {
    const dee = (await t.db.user.findUniqueOrThrow({ where: { email: "dee@a.test" } })).id;
    const before = await passwordOf(dee);
    let reset: Promise<unknown> = Promise.resolve();
    // Tenant B's admin adds Dee and has not committed yet when A's admin resets Dee's password.
    await t.db.$transaction(
      async (tx) => {
        await tx.membership.create({ data: { tenantId: "ten_b", userId: dee, role: "viewer" } });
        reset = resetMemberPassword(t.db, "ten_a", dee, "usr_ann").catch((err: unknown) => err);
        await waitForLockWaiter(t.db);
      },
      { timeout: 90_000 },
    );
    expect(await reset).toMatchObject({
      code: "PRECONDITION_FAILED",
      message: "dee@a.test also belongs to another tenant; ask them to change it on their account page",
    });
    expect(await passwordOf(dee)).toBe(before);
  });

  it("refuses the admin's own account, non-members and non-admins", async () => {
    await expect(resetMemberPassword(t.db, "ten_a", "usr_ann", "usr_ann")).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining("account page"),
    });
    await expect(resetMemberPassword(t.db, "ten_a", "usr_cid", "usr_ann")).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(resetMemberPassword(t.db, "ten_a", "usr_ann", "usr_cid")).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });
});
