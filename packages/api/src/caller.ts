import { type Db, findUserByEmail, listMemberships, resolveApiToken, type TenantMembership } from "@rhumbatron/db";
import type { Auth } from "./auth.ts";
import { lowerRole } from "./roles.ts";

/** Who is making a request: the user and their role in each tenant they may act in. */
export interface Caller {
  userId: string;
  email: string;
  name: string;
  memberships: TenantMembership[];
  /** How the request proved who it is. */
  via: "session" | "token" | "test";
}

export interface ResolveOptions {
  /** better-auth for a database client, built by the host from its settings; reads the session cookie. */
  auth: (db: Db) => Auth;
  /**
   * Tests only (`callerAs`): act as the user with this email, whatever the headers say. Nothing in
   * production passes it: the route handlers resolve callers from headers alone.
   */
  localUserEmail?: string;
  now?: () => Date;
}

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * The one place that decides who the caller is; every tRPC procedure and every page asks it.
 *
 * - `Authorization: Bearer rbt_…` (an API token): its user, with exactly one membership: the token's
 *   tenant, at the lower of the token's role and the user's current role there. A malformed, unknown
 *   or revoked token, or one whose user has left the tenant, is nobody (null), and so is a request
 *   with any other Authorization header: credentials that were offered and failed never fall back to
 *   the session cookie.
 * - Otherwise the better-auth session cookie: its user, with every membership.
 *
 * Returns null for nobody, which procedures turn into UNAUTHORIZED and pages into /sign-in.
 */
export async function resolveCaller(db: Db, headers: Headers, options: ResolveOptions): Promise<Caller | null> {
  if (options.localUserEmail !== undefined) return callerByEmail(db, options.localUserEmail);
  const authorization = headers.get("authorization");
  if (authorization !== null) {
    const secret = BEARER.exec(authorization.trim())?.[1];
    return secret ? callerByToken(db, secret, (options.now ?? (() => new Date()))()) : null;
  }
  const session = await options.auth(db).api.getSession({ headers });
  if (!session) return null;
  const { id, email, name } = session.user;
  return { userId: id, email, name, memberships: await listMemberships(db, id), via: "session" };
}

async function callerByToken(db: Db, secret: string, now: Date): Promise<Caller | null> {
  const identity = await resolveApiToken(db, secret, now);
  if (!identity?.membership) return null;
  const { user, membership, tokenRole } = identity;
  return {
    userId: user.id,
    email: user.email,
    name: user.name,
    memberships: [{ ...membership, role: lowerRole(tokenRole, membership.role) }],
    via: "token",
  };
}

async function callerByEmail(db: Db, email: string): Promise<Caller | null> {
  const user = await findUserByEmail(db, email);
  if (!user) return null;
  return {
    userId: user.id,
    email: user.email,
    name: user.name,
    memberships: await listMemberships(db, user.id),
    via: "test",
  };
}

/** The caller's membership in one tenant, or undefined when they have none there. */
export function membershipIn(caller: Caller, tenantId: string): TenantMembership | undefined {
  return caller.memberships.find((m) => m.tenantId === tenantId);
}
