import type { Role } from "@rhumbatron/db";

/**
 * Roles from least to most privileged: each role may do everything the roles before it may.
 * The order is written out here (not derived from the enum's declaration order) so a reordering of
 * the Prisma enum can never silently change who may do what.
 */
export const ROLE_ORDER = ["viewer", "member", "approver", "operator", "admin"] as const satisfies readonly Role[];

// Compile-time check that every Role has a place in ROLE_ORDER.
type Unranked = Exclude<Role, (typeof ROLE_ORDER)[number]>;
const everyRoleRanked: Unranked extends never ? true : never = true;
void everyRoleRanked;

export function roleRank(role: Role): number {
  return ROLE_ORDER.indexOf(role);
}

/** True when `role` is `minimum` or above it. */
export function hasAtLeast(role: Role, minimum: Role): boolean {
  return roleRank(role) >= roleRank(minimum);
}

/** The less privileged of two roles: what an API token may do is capped by its user's current role. */
export function lowerRole(a: Role, b: Role): Role {
  return roleRank(a) <= roleRank(b) ? a : b;
}
