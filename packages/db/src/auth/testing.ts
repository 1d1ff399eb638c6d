import type { Db } from "../client.ts";
import type { Role } from "../generated/prisma/enums.ts";

/**
 * Seeds tenants "ten_a" (slug a, name A) and "ten_b", and each person with the role they hold in
 * one of them: `["Ann", "a", "admin"]` is user usr_ann, ann@a.test, an admin of ten_a.
 */
export async function seedPeople(db: Db, people: [name: string, tenant: "a" | "b", role: Role][]): Promise<void> {
  await db.tenant.createMany({
    data: [
      { id: "ten_a", slug: "a", name: "A" },
      { id: "ten_b", slug: "b", name: "B" },
    ],
  });
  const id = (name: string) => `usr_${name.toLowerCase()}`;
  await db.user.createMany({
    data: people.map(([name, tenant]) => ({ id: id(name), email: `${name.toLowerCase()}@${tenant}.test`, name })),
  });
  await db.membership.createMany({
    data: people.map(([name, tenant, role]) => ({ tenantId: `ten_${tenant}`, userId: id(name), role })),
  });
}
