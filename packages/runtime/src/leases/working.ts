import { raw, sql } from "../sql.ts";

/**
 * What this process is working on, by holder and kind of lease.
 *
 * A lease held by a live worker is left alone (holders.ts). One case slips through that rule: the
 * holder is alive but its work on the lease ended without letting go, typically because the
 * database went away under it (a Postgres restart) so the release itself failed. Nobody else may
 * take the lease while the holder beats, and the holder would wait for its own lease to run out
 * (up to 15 minutes for an Agent run). So every claim also takes what its own holder holds but is
 * not working on here: that lease is an orphan, and its holder resumes it.
 *
 * Not at once: an orphan is left alone for `holdMs` after its work ended (worker.takeoverSeconds,
 * the wait a dead holder's lease gets too), so work that fails again and again is retried at that
 * pace, not on every tick. And only a holder that beats (a worker process, with a heartbeat row)
 * takes its orphans; tools and tests without one keep the old rule, the lease's own end.
 *
 * Claims of one holder and kind run one at a time, and what a claim returns is registered before
 * the next one reads the list, so two claims in one process never take the same orphan.
 */
export type LeaseKind = "agent_run" | "workflow" | "queue_message";

interface Slot {
  working: Set<string>;
  /** When work on a lease last ended here (the caller's clock, ms). */
  ended: Map<string, number>;
}

const slots = new Map<string, Slot>();
const claiming = new Map<string, Promise<unknown>>();
const keyOf = (owner: string, kind: LeaseKind) => `${kind}\u0000${owner}`;

function slotOf(owner: string, kind: LeaseKind): Slot {
  const key = keyOf(owner, kind);
  let s = slots.get(key);
  if (!s) {
    s = { working: new Set(), ended: new Map() };
    slots.set(key, s);
  }
  return s;
}

/**
 * Runs `query` with the IDs it must not take as orphans (what `owner` works on now, and what it
 * stopped working on less than `holdMs` before `now`), then registers the IDs it took (`taken`).
 * Claims of the same holder and kind are serialised.
 */
export async function claimWhileWorking<T>(
  owner: string,
  kind: LeaseKind,
  hold: { now: Date; holdMs: number },
  query: (notOrphans: string[]) => Promise<T>,
  taken: (result: T) => string[],
): Promise<T> {
  const key = keyOf(owner, kind);
  const before = claiming.get(key) ?? Promise.resolve();
  const mine = before
    .catch(() => {})
    .then(async () => {
      const slot = slotOf(owner, kind);
      const since = hold.now.getTime() - hold.holdMs;
      for (const [id, at] of slot.ended) if (at <= since) slot.ended.delete(id);
      const result = await query([...slot.working, ...slot.ended.keys()]);
      for (const id of taken(result)) {
        slot.working.add(id);
        slot.ended.delete(id);
      }
      return result;
    });
  claiming.set(key, mine);
  try {
    return await mine;
  } finally {
    if (claiming.get(key) === mine) claiming.delete(key);
  }
}

/**
 * The holder is done with these leases here, at `at` (released, finished, or failed: a failure
 * leaves an orphan, which its holder takes again once the hold has passed).
 */
export function doneWorking(owner: string, kind: LeaseKind, ids: Iterable<string>, at: Date): void {
  const slot = slotOf(owner, kind);
  for (const id of ids) {
    slot.working.delete(id);
    slot.ended.set(id, at.getTime());
  }
}

/** What `owner` works on here now (tests and the operations view). */
export function workingOn(owner: string, kind: LeaseKind): string[] {
  return [...(slots.get(keyOf(owner, kind))?.working ?? [])];
}

/**
 * SQL condition: the row is held by `owner` (`column`), a worker that beats and has not stopped,
 * and is not among `notOrphans` (`idExpr`, compared as text): an orphan its holder takes again.
 */
export function orphanedBy(column: "lease_owner" | "runner_id", idExpr: string, owner: string, notOrphans: string[]) {
  return sql`(${raw(column)} = ${owner}
    AND EXISTS (SELECT 1 FROM worker_heartbeats WHERE worker_id = ${owner} AND stopped_at IS NULL)
    AND NOT (${raw(idExpr)} = ANY(${notOrphans}::text[])))`;
}
