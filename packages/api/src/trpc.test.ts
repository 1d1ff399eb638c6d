import type { Role } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { ROLE_ORDER } from "./roles.ts";
import { ACME, emailFor, ROLES, seedTenants } from "./testing/fixtures.ts";
import { testServices } from "./testing/services.ts";
import { createCallerFactory, createContext, router, tenantProcedure } from "./trpc.ts";

const t = useTestDatabase();
beforeAll(async () => seedTenants(t.db));

// One procedure per minimum role, so the role middleware is exercised above `viewer` too.
const roleOf = tenantProcedure;
const guarded = router({
  viewer: roleOf("viewer").query(({ ctx }) => ctx.membership.role),
  member: roleOf("member").query(({ ctx }) => ctx.membership.role),
  approver: roleOf("approver").query(({ ctx }) => ctx.membership.role),
  operator: roleOf("operator").query(({ ctx }) => ctx.membership.role),
  admin: roleOf("admin").query(({ ctx }) => ctx.membership.role),
});

async function callGuarded(as: Role, minimum: Role): Promise<string | undefined> {
  const caller = createCallerFactory(guarded)(
    createContext({ db: t.db, headers: new Headers(), localUserEmail: emailFor(as), services: testServices() }),
  );
  return caller[minimum]({ tenantId: ACME.tenantId }).then(
    (role) => (role === as ? "allowed" : `wrong membership ${role}`),
    (err: { code?: string }) => err.code,
  );
}

describe("role order viewer < member < approver < operator < admin", () => {
  it("is written out in that order", () => {
    expect(ROLE_ORDER).toEqual(["viewer", "member", "approver", "operator", "admin"]);
  });

  it.each(ROLES)("a procedure needing %s admits exactly that role and the ones above it", async (minimum) => {
    const outcomes = await Promise.all(ROLES.map(async (role) => [role, await callGuarded(role, minimum)]));
    const rank = ROLE_ORDER.indexOf(minimum);
    expect(Object.fromEntries(outcomes)).toEqual(
      Object.fromEntries(ROLES.map((role) => [role, ROLE_ORDER.indexOf(role) >= rank ? "allowed" : "FORBIDDEN"])),
    );
  });
});
