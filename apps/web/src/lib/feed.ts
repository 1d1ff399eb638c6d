/** How many feed rows a page keeps in memory; older ones drop off the bottom. */
export const FEED_KEEP = 200;

/**
 * Adds one feed row to the rows shown, newest first. The feed's IDs only grow, so a row the page
 * already has (a reconnect that resends it) is ignored and the order is by ID, not by arrival.
 */
export function mergeFeed<T extends { id: string }>(rows: readonly T[], row: T, keep = FEED_KEEP): T[] {
  if (rows.some((r) => r.id === row.id)) return rows as T[];
  const id = BigInt(row.id);
  const at = rows.findIndex((r) => BigInt(r.id) < id);
  const next = at === -1 ? [...rows, row] : [...rows.slice(0, at), row, ...rows.slice(at)];
  return next.slice(0, keep);
}
