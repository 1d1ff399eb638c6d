// Who may do what. Roles:
//   viewer   - may browse products only;
//   customer - may read and change their own cart and wishlist, nobody else's;
//   admin    - may do everything, for any user.

export const roles = ["viewer", "customer", "admin"] as const;
export type Role = (typeof roles)[number];

export type Action = "products:read" | "cart:read" | "cart:write" | "wishlist:read" | "wishlist:write";

/** Actions on data that belongs to one user (a cart or a wishlist). */
const ownedActions: ReadonlySet<Action> = new Set<Action>([
  "cart:read",
  "cart:write",
  "wishlist:read",
  "wishlist:write",
]);

const grants: Readonly<Record<Role, readonly Action[]>> = {
  viewer: ["products:read"],
  customer: ["products:read", "cart:read", "cart:write", "wishlist:read", "wishlist:write"],
  admin: ["products:read", "cart:read", "cart:write", "wishlist:read", "wishlist:write"],
};

export interface Actor {
  readonly id: string;
  readonly role: Role;
}

export function isRole(value: string): value is Role {
  return (roles as readonly string[]).includes(value);
}

/**
 * May `role` perform `action`? Pass `owner` (whose cart or wishlist it is, and
 * who is asking) to also check ownership: only admins act on other users' data.
 */
export function can(role: Role, action: Action, owner?: { actorId: string; ownerId: string }): boolean {
  if (!grants[role].includes(action)) return false;
  if (owner === undefined || role === "admin" || !ownedActions.has(action)) return true;
  return owner.actorId === owner.ownerId;
}
