import type { Db } from "../client.ts";

/**
 * Sign-in attempts counted in Postgres (docs/sign-in.md), so every web process sees
 * the same count and a restart does not lift a lock. An attempt counts from the moment it starts:
 * it is checked and recorded in one call under an advisory lock per key, so parallel guesses cannot
 * all pass the check before the first one is written. Times are the caller's clock.
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
 * One call of the SQL function `rhumbatron_begin_sign_in_attempt` (its migration says how), so a burst
 * of sign-ins waits on row-free advisory locks, not on pooled connections held by open transactions.
 */
export async function beginSignInAttempt(db: Db, keys: readonly AttemptKey[], at: Date): Promise<BeginAttemptResult> {
  const input = JSON.stringify(
    keys.map((k) => ({ scope: k.scope, key: k.key, max: k.limit.max, windowMs: k.limit.windowMs })),
  );
  const rows = await db.$queryRaw<{ r: AttemptRow }[]>`
    SELECT rhumbatron_begin_sign_in_attempt(${input}::jsonb, (${at.toISOString()}::timestamptz AT TIME ZONE 'UTC')) AS r`;
  const r = rows[0]?.r;
  if (!r) throw new Error("rhumbatron_begin_sign_in_attempt returned nothing");
  if (r.ok) return { ok: true, ids: r.ids.map((x) => ({ scope: x.scope, id: BigInt(x.id) })) };
  return { ok: false, blocked: r.blocked.map((b) => ({ scope: b.scope, until: new Date(Number(b.untilMs)) })) };
}

type AttemptRow =
  | { ok: true; ids: { scope: string; id: string }[] }
  | { ok: false; blocked: { scope: string; untilMs: number | string }[] };

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
