import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../testing/index.ts";
import { createApiToken, hashApiToken, listApiTokens, resolveApiToken, revokeApiToken } from "./api-tokens.ts";
import { seedPeople } from "./testing.ts";

const t = useTestDatabase();
const at = (s: number) => new Date(Date.UTC(2026, 10, 29, 12, 0, s));

const seed = () =>
  seedPeople(t.db, [
    ["Ann", "a", "admin"],
    ["Bob", "a", "member"],
  ]);

describe("API tokens", () => {
  it("store only the secret's SHA-256 and a short prefix; the secret is rbt_ + 43 base64url characters", async () => {
    await seed();
    const { token, secret } = await createApiToken(
      t.db,
      { tenantId: "ten_a", userId: "usr_ann", name: "ci", role: "viewer" },
      at(0),
    );
    expect(secret).toMatch(/^rbt_[A-Za-z0-9_-]{43}$/);
    expect(token).toMatchObject({ name: "ci", role: "viewer", userEmail: "ann@a.test", revokedAt: null });
    expect(token.prefix).toBe(secret.slice(0, 12));
    const row = await t.db.apiToken.findUniqueOrThrow({ where: { id: token.id } });
    expect(row.tokenHash).toBe(hashApiToken(secret));
    expect(JSON.stringify(row)).not.toContain(secret);
  });

  it("resolve a live secret to its user, tenant and role, and record the use at most once a minute", async () => {
    const { token, secret } = await createApiToken(
      t.db,
      { tenantId: "ten_a", userId: "usr_bob", name: "bob's", role: "member" },
      at(0),
    );
    const identity = await resolveApiToken(t.db, secret, at(10));
    expect(identity).toEqual({
      tokenId: token.id,
      tenantId: "ten_a",
      tokenRole: "member",
      user: { id: "usr_bob", email: "bob@a.test", name: "Bob" },
      membership: { tenantId: "ten_a", slug: "a", name: "A", role: "member" },
    });
    const lastUsed = async () => (await t.db.apiToken.findUniqueOrThrow({ where: { id: token.id } })).lastUsedAt;
    expect(await lastUsed()).toEqual(at(10));
    await resolveApiToken(t.db, secret, at(30));
    expect(await lastUsed()).toEqual(at(10));
    await resolveApiToken(t.db, secret, at(70));
    expect(await lastUsed()).toEqual(at(70));
  });

  it("resolve nothing for a malformed, unknown or revoked secret", async () => {
    const { token, secret } = await createApiToken(
      t.db,
      { tenantId: "ten_a", userId: "usr_bob", name: "soon revoked", role: "viewer" },
      at(0),
    );
    expect(await resolveApiToken(t.db, "not-a-token", at(1))).toBeNull();
    expect(await resolveApiToken(t.db, `rbt_${"A".repeat(43)}`, at(1))).toBeNull();
    await revokeApiToken(t.db, { tenantId: "ten_a", tokenId: token.id, userId: "usr_bob" }, at(2));
    expect(await resolveApiToken(t.db, secret, at(3))).toBeNull();
  });

  it("report no membership once the user has left the token's tenant", async () => {
    await t.db.membership.create({ data: { tenantId: "ten_b", userId: "usr_bob", role: "admin" } });
    const { secret } = await createApiToken(
      t.db,
      { tenantId: "ten_b", userId: "usr_bob", name: "b", role: "admin" },
      at(0),
    );
    await t.db.membership.delete({ where: { tenantId_userId: { tenantId: "ten_b", userId: "usr_bob" } } });
    expect((await resolveApiToken(t.db, secret, at(1)))?.membership).toBeNull();
  });

  it("list one user's tokens, or everyone's in the tenant (null user), newest first, never other tenants'", async () => {
    const bobs = await listApiTokens(t.db, { tenantId: "ten_a", userId: "usr_bob" });
    expect(bobs.every((x) => x.userId === "usr_bob" && x.tenantId === "ten_a")).toBe(true);
    const all = await listApiTokens(t.db, { tenantId: "ten_a", userId: null });
    expect(new Set(all.map((x) => x.userId))).toEqual(new Set(["usr_ann", "usr_bob"]));
    expect(all.some((x) => x.tenantId !== "ten_a")).toBe(false);
    expect(all.map((x) => x.createdAt.getTime())).toEqual(
      [...all.map((x) => x.createdAt.getTime())].sort((a, b) => b - a),
    );
    expect(Object.keys(all[0] ?? {})).not.toContain("tokenHash");
  });

  it("revoke only within the scope given (NOT_FOUND outside it) and keep the first revocation time", async () => {
    const { token } = await createApiToken(
      t.db,
      { tenantId: "ten_a", userId: "usr_ann", name: "ann's", role: "admin" },
      at(0),
    );
    await expect(
      revokeApiToken(t.db, { tenantId: "ten_a", tokenId: token.id, userId: "usr_bob" }, at(1)),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      revokeApiToken(t.db, { tenantId: "ten_b", tokenId: token.id, userId: null }, at(1)),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect((await t.db.apiToken.findUniqueOrThrow({ where: { id: token.id } })).revokedAt).toBeNull();
    expect(
      (await revokeApiToken(t.db, { tenantId: "ten_a", tokenId: token.id, userId: null }, at(5))).revokedAt,
    ).toEqual(at(5));
    expect(
      (await revokeApiToken(t.db, { tenantId: "ten_a", tokenId: token.id, userId: "usr_ann" }, at(9))).revokedAt,
    ).toEqual(at(5));
  });
});
