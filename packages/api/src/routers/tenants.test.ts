import { DEMO, seedDemo } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ACME,
  callerAs,
  emailFor,
  LONER_EMAIL,
  OTHER,
  OUTSIDER_EMAIL,
  ROLES,
  seedTenants,
} from "../testing/fixtures.ts";
import { testServices } from "../testing/services.ts";
import { createContext } from "../trpc.ts";
import { createCaller } from "./_app.ts";

const t = useTestDatabase();
beforeAll(async () => {
  await seedTenants(t.db);
  await seedDemo(t.db);
});

describe("tenants.mine", () => {
  it.each(ROLES)("shows a %s their tenant with that role, and no other tenant", async (role) => {
    const mine = await callerAs(t.db, emailFor(role)).tenants.mine();
    expect(mine).toEqual([{ tenantId: ACME.tenantId, slug: "acme", name: ACME.name, role }]);
  });

  it("shows a member of another tenant only that tenant", async () => {
    const mine = await callerAs(t.db, OUTSIDER_EMAIL).tenants.mine();
    expect(mine.map((m) => m.tenantId)).toEqual([OTHER.tenantId]);
  });

  it("lists every tenant of a user in several, each with its own role, by name", async () => {
    await t.db.membership.create({ data: { tenantId: OTHER.tenantId, userId: "usr_loner", role: "viewer" } });
    await t.db.membership.create({ data: { tenantId: ACME.tenantId, userId: "usr_loner", role: "operator" } });
    const mine = await callerAs(t.db, LONER_EMAIL).tenants.mine();
    expect(mine.map((m) => [m.name, m.role])).toEqual([
      ["Acme", "operator"],
      ["Other", "viewer"],
    ]);
  });

  it("without a session or a token is UNAUTHORIZED, even with the seeded demo admin in the database", async () => {
    expect(await t.db.user.count({ where: { id: DEMO.userId } })).toBe(1);
    const caller = createCaller(createContext({ db: t.db, headers: new Headers(), services: testServices() }));
    await expect(caller.tenants.mine()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("returns UNAUTHORIZED when the local user does not exist", async () => {
    await expect(callerAs(t.db, "nobody@nowhere.test").tenants.mine()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });
});
