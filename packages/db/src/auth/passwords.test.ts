import { verifyPassword } from "better-auth/crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../testing/index.ts";
import { CREDENTIAL_PROVIDER, setUserPassword } from "./passwords.ts";

const t = useTestDatabase();

describe("setUserPassword", () => {
  it("stores a better-auth credential account, writes nothing for the same password, and replaces a different one", async () => {
    await t.db.user.create({ data: { id: "usr_pw", email: "pw@x.test", name: "Pw" } });
    expect(await setUserPassword(t.db, "usr_pw", "correct horse")).toBe(true);
    const first = await t.db.account.findUniqueOrThrow({
      where: { providerId_accountId: { providerId: CREDENTIAL_PROVIDER, accountId: "usr_pw" } },
    });
    expect(first).toMatchObject({ userId: "usr_pw", providerId: "credential", accountId: "usr_pw" });
    expect(first.password).not.toContain("correct horse");
    expect(await verifyPassword({ hash: first.password ?? "", password: "correct horse" })).toBe(true);

    expect(await setUserPassword(t.db, "usr_pw", "correct horse")).toBe(false);
    expect(await t.db.account.findUniqueOrThrow({ where: { id: first.id } })).toEqual(first);

    expect(await setUserPassword(t.db, "usr_pw", "battery staple")).toBe(true);
    const second = await t.db.account.findUniqueOrThrow({ where: { id: first.id } });
    expect(await verifyPassword({ hash: second.password ?? "", password: "battery staple" })).toBe(true);
    expect(await t.db.account.count()).toBe(1);
  });
});
