import { createHash, randomBytes, randomUUID } from "node:crypto";
import { DomainError } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import type { Role } from "../generated/prisma/enums.ts";

/**
 * Personal API tokens: `rbt_<43 base64url characters>` (32 random bytes), shown once at creation.
 * Only the SHA-256 hex of the whole secret is stored, plus its first characters (`prefix`) so a list
 * can tell tokens apart. A token acts as its user in one tenant with at most its role there; the
 * caller resolution in apps/web caps it by the user's current role.
 */
export const API_TOKEN_PREFIX = "rbt_";
const SECRET_PATTERN = /^rbt_[A-Za-z0-9_-]{43}$/;
const SHOWN_PREFIX_LENGTH = 12;
/** last_used_at is a hint for people, not an audit log: write it at most once a minute per token. */
const LAST_USED_RESOLUTION_MS = 60_000;

export const hashApiToken = (secret: string) => createHash("sha256").update(secret).digest("hex");

export interface ApiTokenSummary {
  id: string;
  tenantId: string;
  userId: string;
  userEmail: string;
  name: string;
  role: Role;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const summarySelect = {
  id: true,
  tenantId: true,
  userId: true,
  name: true,
  role: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
  user: { select: { email: true } },
} as const;

type SummaryRow = Omit<ApiTokenSummary, "userEmail"> & { user: { email: string } };
const toSummary = ({ user, ...row }: SummaryRow): ApiTokenSummary => ({ ...row, userEmail: user.email });

/** Creates a token and returns its secret: the only time the secret exists outside the caller's hands. */
export async function createApiToken(
  db: Db,
  t: { tenantId: string; userId: string; name: string; role: Role },
  now: Date,
): Promise<{ token: ApiTokenSummary; secret: string }> {
  const secret = `${API_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  const row = await db.apiToken.create({
    data: {
      id: `atk_${randomUUID()}`,
      tenantId: t.tenantId,
      userId: t.userId,
      name: t.name,
      role: t.role,
      tokenHash: hashApiToken(secret),
      prefix: secret.slice(0, SHOWN_PREFIX_LENGTH),
      createdAt: now,
    },
    select: summarySelect,
  });
  return { token: toSummary(row), secret };
}

/** A tenant's tokens, newest first: one user's (`userId`), or everyone's (`userId: null`, for admins). */
export async function listApiTokens(
  db: Db,
  q: { tenantId: string; userId: string | null },
): Promise<ApiTokenSummary[]> {
  const rows = await db.apiToken.findMany({
    where: { tenantId: q.tenantId, ...(q.userId === null ? {} : { userId: q.userId }) },
    orderBy: [{ createdAt: "desc" }, { id: "asc" }],
    select: summarySelect,
  });
  return rows.map(toSummary);
}

/**
 * Revokes a token of this tenant: the user's own (`userId`), or anyone's (`userId: null`, admins).
 * A token outside that scope is NOT_FOUND, so nobody learns which token IDs exist. Revoking twice
 * keeps the first revocation time.
 */
export async function revokeApiToken(
  db: Db,
  r: { tenantId: string; tokenId: string; userId: string | null },
  now: Date,
): Promise<ApiTokenSummary> {
  const where = { id: r.tokenId, tenantId: r.tenantId, ...(r.userId === null ? {} : { userId: r.userId }) };
  await db.apiToken.updateMany({ where: { ...where, revokedAt: null }, data: { revokedAt: now } });
  const row = await db.apiToken.findFirst({ where, select: summarySelect });
  if (!row) throw new DomainError("NOT_FOUND", `API token ${r.tokenId} not found`);
  return toSummary(row);
}

export interface ApiTokenIdentity {
  tokenId: string;
  tenantId: string;
  /** The role the token was created with (before capping by the user's current role). */
  tokenRole: Role;
  user: { id: string; email: string; name: string };
  /** The user's membership in the token's tenant now, or null when they have left it. */
  membership: { tenantId: string; slug: string; name: string; role: Role } | null;
}

/**
 * Who a presented secret acts as, or null for anything that is not a live token (malformed, unknown,
 * revoked). Records the use in last_used_at (at most once a minute).
 */
export async function resolveApiToken(db: Db, secret: string, now: Date): Promise<ApiTokenIdentity | null> {
  if (!SECRET_PATTERN.test(secret)) return null;
  const row = await db.apiToken.findUnique({
    where: { tokenHash: hashApiToken(secret) },
    include: {
      user: { select: { id: true, email: true, name: true } },
      tenant: { select: { id: true, slug: true, name: true } },
    },
  });
  if (!row || row.revokedAt) return null;
  const member = await db.membership.findUnique({
    where: { tenantId_userId: { tenantId: row.tenantId, userId: row.userId } },
    select: { role: true },
  });
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    await db.apiToken.updateMany({
      where: {
        id: row.id,
        OR: [{ lastUsedAt: null }, { lastUsedAt: { lte: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) } }],
      },
      data: { lastUsedAt: now },
    });
  }
  return {
    tokenId: row.id,
    tenantId: row.tenantId,
    tokenRole: row.role,
    user: row.user,
    membership: member
      ? { tenantId: row.tenant.id, slug: row.tenant.slug, name: row.tenant.name, role: member.role }
      : null,
  };
}
