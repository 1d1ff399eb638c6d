import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { ACME, callerAs, callerWith, emailFor, OTHER, OUTSIDER_EMAIL, seedTenants } from "../testing/fixtures.ts";

const t = useTestDatabase();
beforeAll(async () => seedTenants(t.db));

const tenantId = ACME.tenantId;
const tokenCount = () => t.db.apiToken.count();

describe("tokens.create", () => {
  it("gives any member a token for themselves, with its secret once and only its hash stored", async () => {
    const created = await callerAs(t.db, emailFor("viewer")).tokens.create({
      tenantId,
      name: "laptop",
      role: "viewer",
    });
    expect(created.secret).toMatch(/^rbt_[A-Za-z0-9_-]{43}$/);
    expect(created.token).toMatchObject({ name: "laptop", role: "viewer", userId: "usr_acme_viewer", tenantId });
    expect(created.token.prefix).toBe(created.secret.slice(0, 12));
    const row = await t.db.apiToken.findUniqueOrThrow({ where: { id: created.token.id } });
    expect(row.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(created.secret);
  });

  it("refuses a role above the caller's own, writing nothing", async () => {
    const before = await tokenCount();
    for (const [as, role] of [
      ["viewer", "member"],
      ["member", "approver"],
      ["operator", "admin"],
    ] as const) {
      await expect(
        callerAs(t.db, emailFor(as)).tokens.create({ tenantId, name: "too much", role }),
      ).rejects.toMatchObject({ code: "FORBIDDEN" });
    }
    expect(await tokenCount()).toBe(before);
  });

  it("lets an admin create an admin token, and refuses a blank name and an unknown role", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    expect((await admin.tokens.create({ tenantId, name: "deploy", role: "admin" })).token.role).toBe("admin");
    await expect(admin.tokens.create({ tenantId, name: "  ", role: "viewer" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(
      admin.tokens.create({ tenantId, name: "x", role: "owner" as unknown as "admin" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  it("caps a token made with a token: never above the creating token's own role", async () => {
    const { secret } = await callerAs(t.db, emailFor("admin")).tokens.create({ tenantId, name: "m", role: "member" });
    const viaToken = callerWith(t.db, { authorization: `Bearer ${secret}` });
    await expect(viaToken.tokens.create({ tenantId, name: "escalate", role: "admin" })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    expect((await viaToken.tokens.create({ tenantId, name: "ok", role: "member" })).token.role).toBe("member");
  });
});

describe("tokens.list", () => {
  it("shows a non-admin only their own tokens, never a secret or hash", async () => {
    const member = callerAs(t.db, emailFor("member"));
    await member.tokens.create({ tenantId, name: "member's", role: "member" });
    const mine = await member.tokens.list({ tenantId });
    expect(mine.map((x) => x.name)).toEqual(["member's"]);
    const keys = Object.keys(mine[0] ?? {});
    expect(keys).not.toContain("tokenHash");
    expect(keys).not.toContain("secret");
  });

  it("shows an admin every token in the tenant, with its owner, and nothing from other tenants", async () => {
    await callerAs(t.db, OUTSIDER_EMAIL).tokens.create({ tenantId: OTHER.tenantId, name: "other's", role: "admin" });
    const all = await callerAs(t.db, emailFor("admin")).tokens.list({ tenantId });
    expect(new Set(all.map((x) => x.userEmail))).toEqual(
      new Set([emailFor("viewer"), emailFor("admin"), emailFor("member")]),
    );
    expect(all.some((x) => x.name === "other's")).toBe(false);
    await expect(callerAs(t.db, OUTSIDER_EMAIL).tokens.list({ tenantId })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });
});

describe("tokens.revoke", () => {
  it("revokes the caller's own token: it stops working at once", async () => {
    const approver = callerAs(t.db, emailFor("approver"));
    const { token, secret } = await approver.tokens.create({ tenantId, name: "short-lived", role: "viewer" });
    // One caller per request, as over HTTP (a context resolves its caller once).
    const request = () => callerWith(t.db, { authorization: `Bearer ${secret}` });
    expect((await request().projects.list({ tenantId })).length).toBeGreaterThan(0);
    expect((await approver.tokens.revoke({ tenantId, tokenId: token.id })).revokedAt).toBeInstanceOf(Date);
    await expect(request().projects.list({ tenantId })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("hides another member's token from a non-admin (NOT_FOUND, unchanged) but lets an admin revoke it", async () => {
    const { token } = await callerAs(t.db, emailFor("operator")).tokens.create({
      tenantId,
      name: "operator's",
      role: "operator",
    });
    await expect(
      callerAs(t.db, emailFor("member")).tokens.revoke({ tenantId, tokenId: token.id }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect((await t.db.apiToken.findUniqueOrThrow({ where: { id: token.id } })).revokedAt).toBeNull();
    const revoked = await callerAs(t.db, emailFor("admin")).tokens.revoke({ tenantId, tokenId: token.id });
    expect(revoked).toMatchObject({ id: token.id, userEmail: emailFor("operator") });
    expect(revoked.revokedAt).not.toBeNull();
  });

  it("is NOT_FOUND for another tenant's token, even for that tenant's admin acting in their own tenant", async () => {
    const { token } = await callerAs(t.db, emailFor("admin")).tokens.create({ tenantId, name: "acme", role: "viewer" });
    await expect(
      callerAs(t.db, OUTSIDER_EMAIL).tokens.revoke({ tenantId: OTHER.tenantId, tokenId: token.id }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect((await t.db.apiToken.findUniqueOrThrow({ where: { id: token.id } })).revokedAt).toBeNull();
  });
});
