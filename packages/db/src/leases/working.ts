import { Prisma } from "../generated/prisma/client.ts";

/**
 * What this process is working on, by holder and kind of lease.
 *
 * A lease held by a live worker is left alone (holders.ts). One case slips through that rule: the
 * holder is alive but its work on the lease ended without letting go, typically because the
 * database went away under it (a Postgres restart) so the release itself failed. Nobody else may
 * take the lease while the holder beats, and the holder would wait for its own lease to run out
 * (up to 15 minutes for an Agent run). So every claim also takes what its own holder holds but is
 * not working on here: that lease is an orphan, and its holder resumes it at once.
 *
 * Claims of one holder and kind run one at a time, and what a claim returns is registered before
 * the next one reads the list, so two claims in one process never take the same orphan.
 */
export type LeaseKind = "agent_run" | "workflow" | "queue_message";

const held = new Map<string, Set<string>>();
const claiming = new Map<string, Promise<unknown>>();
const slot = (owner: string, kind: LeaseKind) => `${kind}\u0000${owner}`;

function setOf(owner: string, kind: LeaseKind): Set<string> {
  const key = slot(owner, kind);
  let s = held.get(key);
  if (!s) {
    s = new Set();
    held.set(key, s);
  }
  return s;
}

/**
 * Runs `query` with the IDs `owner` works on now (of this kind), then registers the IDs it took
 * (`taken`); claims of the same holder and kind are serialised.
 */
export async function claimWhileWorking<T>(
  owner: string,
  kind: LeaseKind,
  query: (busy: string[]) => Promise<T>,
  taken: (result: T) => string[],
): Promise<T> {
  const key = slot(owner, kind);
  const before = claiming.get(key) ?? Promise.resolve();
  const mine = before
    .catch(() => {})
    .then(async () => {
      const busy = setOf(owner, kind);
      const result = await query([...busy]);
      for (const id of taken(result)) busy.add(id);
      return result;
    });
  claiming.set(key, mine);
  try {
    return await mine;
  } finally {
    if (claiming.get(key) === mine) claiming.delete(key);
  }
}

/** The holder is done with these leases here (released, finished, or failed: a failure leaves an orphan). */
export function doneWorking(owner: string, kind: LeaseKind, ids: Iterable<string>): void {
  const s = held.get(slot(owner, kind));
  if (!s) return;
  for (const id of ids) s.delete(id);
  if (s.size === 0) held.delete(slot(owner, kind));
}

/** What `owner` works on here now (tests and the operations view). */
export function workingOn(owner: string, kind: LeaseKind): string[] {
  return [...(held.get(slot(owner, kind)) ?? [])];
}

/**
 * SQL condition: the row is held by `owner` (`column`) but `owner` is not working on it here
 * (`idExpr`, compared as text, is not among `busy`): an orphan its holder takes again at once.
 */
export function orphanedBy(column: "lease_owner" | "runner_id", idExpr: string, owner: string, busy: string[]) {
  return Prisma.sql`(${Prisma.raw(column)} = ${owner} AND NOT (${Prisma.raw(idExpr)} = ANY(${busy}::text[])))`;
}
