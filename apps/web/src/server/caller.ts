import { type Db, findUserByEmail, listMemberships, type TenantMembership } from "@rhumbatron/db";
import { serverSettings } from "./settings.ts";

/** Who is making a request: the user and their role in each tenant they belong to. */
export interface Caller {
  userId: string;
  email: string;
  name: string;
  memberships: TenantMembership[];
}

/**
 * The one place that decides who the caller is; every tRPC procedure and every page asks it.
 *
 * Sign-in arrives in a later issue and replaces the body of this function: it will read the session
 * from `headers`. Until then the caller is the local user named by RHUMBATRON_LOCAL_USER_EMAIL (the
 * seeded demo admin by default), whatever the request says. `localUserEmail` lets tests pick a user.
 *
 * Returns null when that user does not exist, which procedures turn into UNAUTHORIZED.
 */
export async function resolveCaller(
  db: Db,
  _headers: Headers,
  options: { localUserEmail?: string } = {},
): Promise<Caller | null> {
  const email = options.localUserEmail ?? serverSettings().RHUMBATRON_LOCAL_USER_EMAIL;
  const user = await findUserByEmail(db, email);
  if (!user) return null;
  const memberships = await listMemberships(db, user.id);
  return { userId: user.id, email: user.email, name: user.name, memberships };
}

/** The caller's membership in one tenant, or undefined when they have none there. */
export function membershipIn(caller: Caller, tenantId: string): TenantMembership | undefined {
  return caller.memberships.find((m) => m.tenantId === tenantId);
}
