import { randomUUID } from "node:crypto";
import { DomainError } from "@rhumbatron/core";
import type { SqlDatabase as Db } from "../sql.ts";

/**
 * A named lease: one holder at a time works on a resource, with no transaction open while it works
 * (git and blob work may take minutes; a transaction held that long pins a connection and the
 * database's vacuum). The holder renews it every third of `ttlMs` while its work runs and deletes it
 * when done; a holder that died stops renewing, and its lease is free once `expires_at` passes.
 * Taking it is one statement: insert, or take over a row whose lease ran out.
 */
export interface LeaseOptions {
  /** How long the lease lasts without a renewal (a dead holder's lease is free after it). */
  ttlMs: number;
  /** How long to wait for another holder to let go before giving up (UNAVAILABLE). */
  waitMs: number;
  /** Who holds it (in logs and the row); a new one per call by default. */
  holder?: string;
  /** Between two tries while another holds it. */
  pollMs?: number;
  now?: () => Date;
}

/** Takes the lease if it is free or ran out; true when this holder has it now. */
export async function tryTakeLease(db: Db, name: string, holder: string, ttlMs: number, now: Date): Promise<boolean> {
  const expires = new Date(now.getTime() + ttlMs);
  const taken = await db.$executeRaw`
    INSERT INTO resource_leases (name, holder, expires_at, acquired_at)
    VALUES (${name}, ${holder}, ${expires}, ${now})
    ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at,
      acquired_at = EXCLUDED.acquired_at
    WHERE resource_leases.expires_at < ${now} OR resource_leases.holder = EXCLUDED.holder`;
  return taken === 1;
}

/** Moves the lease's end on; false when this holder no longer has it (it ran out and was taken). */
export async function renewLease(db: Db, name: string, holder: string, ttlMs: number, now: Date): Promise<boolean> {
  const expires = new Date(now.getTime() + ttlMs);
  const n = await db.$executeRaw`
    UPDATE resource_leases SET expires_at = ${expires} WHERE name = ${name} AND holder = ${holder}`;
  return n === 1;
}

/** Lets go of the lease; only its holder can. */
export async function releaseLease(db: Db, name: string, holder: string): Promise<void> {
  await db.$executeRaw`DELETE FROM resource_leases WHERE name = ${name} AND holder = ${holder}`;
}

/** Runs `fn` holding the lease `name`, waiting up to `waitMs` for it; renews it while `fn` runs, releases it after. */
export async function withLease<T>(db: Db, name: string, o: LeaseOptions, fn: () => Promise<T>): Promise<T> {
  const holder = o.holder ?? `lease_${randomUUID()}`;
  const now = o.now ?? (() => new Date());
  const pollMs = o.pollMs ?? 100;
  const giveUp = Date.now() + o.waitMs;
  while (!(await tryTakeLease(db, name, holder, o.ttlMs, now()))) {
    if (Date.now() > giveUp)
      throw new DomainError("UNAVAILABLE", `${name} is held by another worker for more than ${o.waitMs} ms; try again`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
  let renewing: Promise<unknown> = Promise.resolve();
  const timer = setInterval(
    () => {
      renewing = renewLease(db, name, holder, o.ttlMs, now()).catch(() => false);
    },
    Math.max(10, Math.floor(o.ttlMs / 3)),
  );
  timer.unref();
  try {
    return await fn();
  } finally {
    clearInterval(timer);
    await renewing;
    await releaseLease(db, name, holder).catch(() => undefined);
  }
}
