/**
 * The landing queue's depth over time, rebuilt from what is recorded about each Change
 * (docs/metrics.md): when "land when ready" was turned on and off (`change.landing_changed`), the Change's
 * creation when it was created landing, and when it left for good (its promotion, or its
 * cancellation). Pure: the rows and Events are read by packages/db, `now` is passed in.
 */
export interface LandingHistory {
  changeId: string;
  createdAt: Date;
  /** When it last joined the queue (`changes.landing_since`); null while landing is off or once cancelled. */
  landingSince: Date | null;
  /** When its Candidate was promoted (its canonical generation's time), or null. */
  landedAt: Date | null;
  /** When it was cancelled (`change.cancelled`), or null. */
  cancelledAt: Date | null;
  /** Every `change.landing_changed`, in any order. */
  toggles: { at: Date; on: boolean }[];
}

export interface QueueInterval {
  changeId: string;
  joined: Date;
  /** When it left (landed, cancelled or landing turned off); null while it still waits. */
  left: Date | null;
}

/**
 * The spans a Change spent in the landing queue. A Change joins when "land when ready" is turned
 * on, or at its creation when it was created landing (its first toggle turns landing off, or it has
 * none and `landingSince` is set); it leaves when landing is turned off, it lands, or it is
 * cancelled. Cancelling clears `landingSince`, so a Change created landing and cancelled without a
 * toggle leaves no trace and is not counted.
 */
export function landingIntervals(h: LandingHistory): QueueInterval[] {
  const toggles = [...h.toggles].sort((a, b) => a.at.getTime() - b.at.getTime());
  const first = toggles[0];
  let joined: Date | null = null;
  if (first ? !first.on : h.landingSince !== null) joined = first ? h.createdAt : h.landingSince;
  const out: QueueInterval[] = [];
  for (const t of toggles) {
    if (t.on && !joined) joined = t.at;
    if (!t.on && joined) {
      out.push({ changeId: h.changeId, joined, left: t.at });
      joined = null;
    }
  }
  if (joined) {
    const ends = [h.landedAt, h.cancelledAt].filter((d): d is Date => d !== null && d >= (joined as Date));
    const left = ends.length ? new Date(Math.min(...ends.map((d) => d.getTime()))) : null;
    out.push({ changeId: h.changeId, joined, left });
  }
  return out;
}

export interface DepthStep {
  /** Epoch milliseconds: the depth holds from here until the next step. */
  t: number;
  depth: number;
}

/**
 * The queue's depth as steps over [from, end], end = the earlier of `to` and `now`: one step at
 * `from` (the Changes waiting then), one wherever a Change joined or left (several at one instant
 * make one step), and a last one at `end` so the line reaches the present. Nothing after `now` is
 * counted, whatever the rows say.
 */
export function queueDepthSteps(
  intervals: readonly QueueInterval[],
  window: { from: Date; to: Date },
  now: Date,
): DepthStep[] {
  const from = window.from.getTime();
  const end = Math.min(window.to.getTime(), now.getTime());
  if (end < from) return [];
  const live = intervals.filter((i) => i.joined.getTime() <= end && (i.left === null || i.left.getTime() > from));
  const waitingAt = (t: number) =>
    live.filter((i) => i.joined.getTime() <= t && (i.left === null || i.left.getTime() > t)).length;
  const moments = new Set<number>();
  for (const i of live) {
    if (i.joined.getTime() > from) moments.add(i.joined.getTime());
    if (i.left && i.left.getTime() > from && i.left.getTime() <= end) moments.add(i.left.getTime());
  }
  const steps: DepthStep[] = [{ t: from, depth: waitingAt(from) }];
  for (const t of [...moments].sort((a, b) => a - b)) {
    const depth = waitingAt(t);
    if (depth !== steps[steps.length - 1]?.depth) steps.push({ t, depth });
  }
  if (steps[steps.length - 1]?.t !== end) steps.push({ t: end, depth: waitingAt(end) });
  return steps;
}

/** The most Changes that waited at once over the steps (0 for none). */
export function peakDepth(steps: readonly DepthStep[]): number {
  return steps.reduce((max, s) => Math.max(max, s.depth), 0);
}
