import { randomBytes, randomUUID } from "node:crypto";
import { DomainError } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { Prisma } from "../generated/prisma/client.ts";
import type { Role } from "../generated/prisma/enums.ts";
import { type Tx, withTransaction } from "../transaction.ts";
import { hashUserPassword, storePasswordHash } from "./passwords.ts";

/**
 * A tenant's members, administered by its admins (docs/sign-in.md, Members). Every
 * change runs in one transaction holding the tenant row's lock, so two admins acting at once are
 * taken one after the other and the tenant can never be left without an admin.
 */
export interface MemberSummary {
  userId: string;
  email: string;
  name: string;
  role: Role;
  joinedAt: Date;
}

export interface ResetPasswordResult {
  userId: string;
  email: string;
  /** The generated password: returned here once and stored only as a hash. */
  temporaryPassword: string;
  /** Sessions (signed-in browsers) of the user that the reset ended. */
  endedSessions: number;
}

export interface AddMemberResult {
  member: MemberSummary;
  /** The new user's generated password: returned here once and stored only as a hash. Null for an existing user. */
  temporaryPassword: string | null;
}

const memberSelect = {
  role: true,
  createdAt: true,
  user: { select: { id: true, email: true, name: true } },
} as const;

type MemberRow = { role: Role; createdAt: Date; user: { id: string; email: string; name: string } };

const toSummary = (row: MemberRow): MemberSummary => ({
  userId: row.user.id,
  email: row.user.email,
  name: row.user.name,
  role: row.role,
  joinedAt: row.createdAt,
});

/** better-auth looks users up by the lower-cased address, so that is how it is stored. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** 18 random bytes: 24 base64url characters, well above the sign-in minimum (apps/web password-policy.ts). */
const temporaryPassword = () => randomBytes(18).toString("base64url");

export async function listMembers(db: Db, tenantId: string): Promise<MemberSummary[]> {
  const rows = await db.membership.findMany({
    where: { tenantId },
    orderBy: [{ user: { email: "asc" } }],
    select: memberSelect,
  });
  return rows.map(toSummary);
}

/**
 * Adds a person to the tenant by email. A new address creates the user with a generated temporary
 * password (returned once); a known one only gains a membership here (their name and password stay
 * as they are). Someone already in the tenant is CONFLICT.
 */
export async function addMember(
  db: Db,
  tenantId: string,
  input: { email: string; name: string; role: Role },
  by: string,
): Promise<AddMemberResult> {
  const email = normalizeEmail(input.email);
  // Hashing is slow on purpose (scrypt): do it before the transaction when the address looks new.
  const known = await db.user.findUnique({ where: { email }, select: { id: true } });
  const prepared = known ? null : await preparePassword();
  try {
    return await withTransaction(db, async ({ tx }) => {
      await lockTenantAsAdmin(tx, tenantId, by);
      const user = await tx.user.findUnique({ where: { email }, select: { id: true } });
      let userId = user?.id;
      let password: string | null = null;
      if (userId) {
        const existing = await tx.membership.findUnique({
          where: { tenantId_userId: { tenantId, userId } },
          select: { role: true },
        });
        if (existing) throw new DomainError("CONFLICT", `${email} is already a member of this tenant`);
      } else {
        const credential = prepared ?? (await preparePassword());
        userId = `usr_${randomUUID()}`;
        await tx.user.create({ data: { id: userId, email, name: input.name.trim() } });
        await storePasswordHash(tx, userId, credential.hash);
        password = credential.password;
      }
      const row = await tx.membership.create({ data: { tenantId, userId, role: input.role }, select: memberSelect });
      return { member: toSummary(row), temporaryPassword: password };
    });
  } catch (err) {
    // Another tenant's admin created the same address at the same moment.
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002") {
      throw new DomainError("CONFLICT", `${email} was just added by someone else; try again`);
    }
    throw err;
  }
}

/** Gives a member another role. The same role writes nothing (`changed: false`). */
export async function setMemberRole(
  db: Db,
  tenantId: string,
  userId: string,
  role: Role,
  by: string,
): Promise<{ member: MemberSummary; changed: boolean }> {
  return withTransaction(db, async ({ tx }) => {
    await lockTenantAsAdmin(tx, tenantId, by);
    const current = await findMember(tx, tenantId, userId);
    if (current.role === role) return { member: toSummary(current), changed: false };
    if (current.role === "admin") await refuseLastAdmin(tx, tenantId, current, by, "demote");
    const row = await tx.membership.update({
      where: { tenantId_userId: { tenantId, userId } },
      data: { role },
      select: memberSelect,
    });
    return { member: toSummary(row), changed: true };
  });
}

/**
 * Takes a member out of the tenant and revokes their API tokens for it. Such tokens already resolve to
 * nobody once the membership is gone; revoking them keeps the token list honest. The user, their
 * password and their other tenants stay. A user who is not a member is NOT_FOUND, so an admin learns
 * nothing about other tenants' people.
 */
export async function removeMember(
  db: Db,
  tenantId: string,
  userId: string,
  by: string,
  now: Date,
): Promise<{ userId: string; revokedTokens: number }> {
  return withTransaction(db, async ({ tx }) => {
    await lockTenantAsAdmin(tx, tenantId, by);
    const current = await findMember(tx, tenantId, userId);
    if (current.role === "admin") await refuseLastAdmin(tx, tenantId, current, by, "remove");
    await tx.membership.delete({ where: { tenantId_userId: { tenantId, userId } } });
    const revoked = await tx.apiToken.updateMany({
      where: { tenantId, userId, revokedAt: null },
      data: { revokedAt: now },
    });
    return { userId, revokedTokens: revoked.count };
  });
}

/**
 * Gives a member a new generated password (returned once) and ends every session they have, so a
 * browser signed in with the old password is signed out. Their API tokens stay: they are credentials
 * of their own, revoked on the tokens page or by removing the member. Refused (PRECONDITION_FAILED)
 * for the admin's own account, which changes its password on the account page with the current one,
 * and for a user who also belongs to another tenant: one tenant's admin must not take over an account
 * that other tenants rely on. Someone not in this tenant is NOT_FOUND, as in removeMember.
 */
export async function resetMemberPassword(
  db: Db,
  tenantId: string,
  userId: string,
  by: string,
): Promise<ResetPasswordResult> {
  const credential = await preparePassword(); // scrypt, outside the transaction
  return withTransaction(db, async ({ tx }) => {
    await lockTenantAsAdmin(tx, tenantId, by);
    const member = await findMember(tx, tenantId, userId);
    if (userId === by) {
      throw new DomainError(
        "PRECONDITION_FAILED",
        "You cannot reset your own password here; change it on your account page (/settings/account)",
      );
    }
    // FOR UPDATE conflicts with the key-share lock that adding a membership takes on the user row, so
    // no other tenant can add this user between the check below and the commit.
    await tx.$queryRaw`SELECT id FROM users WHERE id = ${userId} FOR UPDATE`;
    const elsewhere = await tx.membership.count({ where: { userId, tenantId: { not: tenantId } } });
    if (elsewhere > 0) {
      throw new DomainError(
        "PRECONDITION_FAILED",
        `${member.user.email} also belongs to another tenant; ask them to change it on their account page`,
      );
    }
    await storePasswordHash(tx, userId, credential.hash);
    const ended = await tx.session.deleteMany({ where: { userId } });
    return {
      userId,
      email: member.user.email,
      temporaryPassword: credential.password,
      endedSessions: ended.count,
    };
  });
}

async function preparePassword(): Promise<{ password: string; hash: string }> {
  const password = temporaryPassword();
  return { password, hash: await hashUserPassword(password) };
}

/**
 * Serializes member changes per tenant (FOR NO KEY UPDATE: rows elsewhere that reference the tenant
 * can still be written) and checks, under that lock, that the acting user is still an admin here:
 * the role the request was let in with may have been taken away a moment ago.
 */
async function lockTenantAsAdmin(tx: Tx, tenantId: string, by: string): Promise<void> {
  const locked = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM tenants WHERE id = ${tenantId} FOR NO KEY UPDATE`;
  if (locked.length === 0) throw new DomainError("NOT_FOUND", `tenant ${tenantId} not found`);
  const actor = await tx.membership.findUnique({
    where: { tenantId_userId: { tenantId, userId: by } },
    select: { role: true },
  });
  if (actor?.role !== "admin") throw new DomainError("FORBIDDEN", "only an admin of this tenant manages its members");
}

async function findMember(tx: Tx, tenantId: string, userId: string): Promise<MemberRow> {
  const row = await tx.membership.findUnique({
    where: { tenantId_userId: { tenantId, userId } },
    select: memberSelect,
  });
  if (!row) throw new DomainError("NOT_FOUND", `user ${userId} is not a member of this tenant`);
  return row;
}

/** A tenant always keeps at least one admin: nobody can demote or remove the last one. */
async function refuseLastAdmin(
  tx: Tx,
  tenantId: string,
  member: MemberRow,
  by: string,
  action: "demote" | "remove",
): Promise<void> {
  const admins = await tx.membership.count({ where: { tenantId, role: "admin" } });
  if (admins > 1) return;
  const self = member.user.id === by;
  throw new DomainError(
    "PRECONDITION_FAILED",
    `${self ? "You are" : `${member.user.email} is`} the last admin of this tenant; make someone else admin first, then ${action} ${self ? "yourself" : "them"}`,
  );
}
