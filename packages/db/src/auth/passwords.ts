import { hashPassword, verifyPassword } from "better-auth/crypto";
import type { Db } from "../client.ts";
import type { Tx } from "../transaction.ts";

/**
 * Email + password credentials in better-auth's own shape: one `accounts` row per user with
 * provider `credential`, account ID = user ID, and the password hashed by better-auth (scrypt), so
 * its sign-in endpoint verifies what is stored here. Sign-up is closed (docs/sign-in.md), so this
 * is how users get a password: the seed, or an admin adding a member or resetting
 * one's password (members.ts). People change their own through better-auth (the account page).
 */
export const CREDENTIAL_PROVIDER = "credential";

/**
 * Gives the user this password unless it already has it. Idempotent: a second call with the same
 * password verifies the stored hash and writes nothing. Returns whether it wrote.
 */
export async function setUserPassword(db: Db, userId: string, password: string): Promise<boolean> {
  const existing = await db.account.findUnique({
    where: { providerId_accountId: { providerId: CREDENTIAL_PROVIDER, accountId: userId } },
    select: { id: true, password: true },
  });
  if (existing?.password && (await verifyPassword({ hash: existing.password, password }))) return false;
  await storePasswordHash(db, userId, await hashUserPassword(password));
  return true;
}

/** better-auth's hash of a password. Slow on purpose (scrypt): call it before a transaction, not inside. */
export function hashUserPassword(password: string): Promise<string> {
  return hashPassword(password);
}

/** Writes a hash from `hashUserPassword` as the user's credential, in a transaction when given one. */
export async function storePasswordHash(tx: Tx, userId: string, hash: string): Promise<void> {
  await tx.account.upsert({
    where: { providerId_accountId: { providerId: CREDENTIAL_PROVIDER, accountId: userId } },
    create: { id: `acc_${userId}`, userId, providerId: CREDENTIAL_PROVIDER, accountId: userId, password: hash },
    update: { password: hash },
  });
}
