import { type Db, type FeedEvent, projectFeedAfter } from "@rhumbatron/db";
import { type TrackedEnvelope, tracked } from "@trpc/server";

/** How often an open feed looks for new rows, and how many it reads at a time. */
export const FEED_POLL_MS = 1_000;
export const FEED_HISTORY = 50;
export const FEED_BATCH = 100;

/** Resolves after `ms`, or at once when the subscription ends. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * A project's live feed as a subscription: the latest FEED_HISTORY rows of project_events (or,
 * after a reconnect, every row after the last one the client saw), then each new row as the
 * projector writes it. Polls rather than listens: the projector's transaction sends no NOTIFY of
 * its own, and one indexed read per second per open page is cheap. Each row is `tracked` with its
 * feed ID, so an EventSource that reconnects resumes without gaps or repeats.
 */
export async function* projectFeed(
  db: Db,
  projectId: string,
  after: bigint | null,
  signal: AbortSignal | undefined,
  pollMs = FEED_POLL_MS,
): AsyncGenerator<TrackedEnvelope<FeedEvent>, void, unknown> {
  let cursor = after;
  while (!signal?.aborted) {
    const limit = cursor === null ? FEED_HISTORY : FEED_BATCH;
    const rows = await projectFeedAfter(db, { projectId, afterId: cursor, limit });
    for (const row of rows) {
      yield tracked(row.id, row);
      cursor = BigInt(row.id);
    }
    cursor ??= 0n;
    if (rows.length < limit || limit === FEED_HISTORY) await pause(pollMs, signal);
  }
}
