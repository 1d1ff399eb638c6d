import { hashPassword, verifyPassword } from "better-auth/crypto";
import type { Db } from "../client.ts";

/**
 * Email + password credentials in better-auth's own shape: one `accounts` row per user with
 * provider `credential`, account ID = user ID, and the password hashed by better-auth (scrypt), so
 * its sign-in endpoint verifies what is stored here. Sign-up is closed (README: Sign-in and API
 * tokens), so this is how users get a password: the seed, or an administrator's script.
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
  const hash = await hashPassword(password); // slow on purpose (scrypt): keep it out of transactions
  await db.account.upsert({
    where: { providerId_accountId: { providerId: CREDENTIAL_PROVIDER, accountId: userId } },
    create: { id: `acc_${userId}`, userId, providerId: CREDENTIAL_PROVIDER, accountId: userId, password: hash },
    update: { password: hash },
  });
  return true;
}
