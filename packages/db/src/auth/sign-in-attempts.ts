import type { Db } from "../client.ts";
import { withTransaction } from "../transaction.ts";

/**
 * Sign-in attempts counted in Postgres (README: Sign-in and API tokens), so every web process sees
 * the same count and a restart does not lift a lock. An attempt counts from the moment it starts:
 * it is checked and recorded in one transaction under an advisory lock per key, so parallel guesses
 * cannot all pass the check before the first one is written. Times are the caller's clock.
 */

export interface AttemptLimit {
  max: number;
  windowMs: number;
}

export interface AttemptKey {
  /** What the key counts: "account" (an email) or "address" (a client address). */
  scope: string;
  key: string;
  limit: AttemptLimit;
}

export type BeginAttemptResult =
  | { ok: true; ids: { scope: string; id: bigint }[] }
  | { ok: false; blocked: { scope: string; until: Date }[] };

/**
 * Checks every key against its limit and, when none is at it, records the attempt under each key.
 * A key at its limit answers when it may try again: when its oldest counted attempt leaves the window.
 */
export async function beginSignInAttempt(db: Db, keys: readonly AttemptKey[], at: Date): Promise<BeginAttemptResult> {
  // Keys locked in one order, so two attempts sharing an account and an address cannot deadlock.
  const sorted = [...keys].sort((a, b) => `${a.scope}\u0000${a.key}`.localeCompare(`${b.scope}\u0000${b.key}`));
  return withTransaction(db, async ({ tx }) => {
    const blocked: { scope: string; until: Date }[] = [];
    for (const k of sorted) {
      const since = new Date(at.getTime() - k.limit.windowMs);
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`sign-in:${k.scope}:${k.key}`}, 0))`;
      // What left the window no longer counts; deleting it here keeps each key's rows to its limit.
      await tx.$executeRaw`DELETE FROM sign_in_attempts WHERE scope = ${k.scope} AND key = ${k.key} AND at <= ${since}`;
      const nth = await tx.$queryRaw<{ at: Date }[]>`
        SELECT at FROM sign_in_attempts WHERE scope = ${k.scope} AND key = ${k.key} AND at > ${since}
        ORDER BY at DESC OFFSET ${k.limit.max - 1} LIMIT 1`;
      const oldest = nth[0]?.at;
      if (oldest) blocked.push({ scope: k.scope, until: new Date(oldest.getTime() + k.limit.windowMs) });
    }
    if (blocked.length > 0) return { ok: false as const, blocked };
    const ids: { scope: string; id: bigint }[] = [];
    for (const k of keys) {
      const row = await tx.signInAttempt.create({ data: { scope: k.scope, key: k.key, at }, select: { id: true } });
      ids.push({ scope: k.scope, id: row.id });
    }
    return { ok: true as const, ids };
  });
}

/** Takes back recorded attempts (they succeeded). */
export async function forgetSignInAttempts(db: Db, ids: readonly bigint[]): Promise<void> {
  if (ids.length > 0) await db.signInAttempt.deleteMany({ where: { id: { in: [...ids] } } });
}

/** Forgets every attempt counted against one key (an account that signed in). */
export async function clearSignInAttempts(db: Db, scope: string, key: string): Promise<number> {
  return (await db.signInAttempt.deleteMany({ where: { scope, key } })).count;
}

/** Maintenance: attempts older than `before` count against nothing (bounded per call). */
export async function pruneSignInAttempts(db: Db, before: Date, limit = 10_000): Promise<number> {
  return db.$executeRaw`
    DELETE FROM sign_in_attempts WHERE id IN (SELECT id FROM sign_in_attempts WHERE at < ${before} LIMIT ${limit})`;
}
