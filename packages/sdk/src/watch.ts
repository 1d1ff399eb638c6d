/**
 * Following a Change until it settles: the Change's Tasks, then the Candidate composed from them.
 * Pure apart from the two reads it is given, so the rules below are easy to test.
 */

export interface TaskView {
  key: string;
  title: string;
  state: string;
  /** Why a blocked Task is blocked (dead_letter, sandbox_meter, command_cap, cancelled). */
  blockedLimit: string | null;
  dependencies: string[];
}

export interface CandidateView {
  id: string;
  status: string;
  approvalRequired: boolean;
  /** Why this Candidate replaced a stale one ("recomposed on generation 7 after chg_… was promoted"). */
  recomposeReason?: string | null;
}

export interface WatchSnapshot {
  change: { id: string; title: string; status: string };
  tasks: TaskView[];
  /** The newest Candidate of the Change, once one is composed. */
  candidate: CandidateView | null;
}

export type Transition =
  | { kind: "task"; key: string; from: string | null; to: string }
  | { kind: "change"; from: string | null; to: string }
  | { kind: "candidate"; id: string; from: string | null; to: string; note?: string };

export interface WatchUpdate extends WatchSnapshot {
  /** What changed since the previous update (everything, on the first one). */
  transitions: Transition[];
}

/**
 * How a watch ended. `verified` and `promoted` are success; `rejected` (the gate found a gap or a
 * person rejected it), `cancelled` and `failed` (a Task failed or is blocked and nothing else can
 * run) are not. A stale Candidate is not an end: the Change is recomposed on the new generation and
 * the watch follows the new Candidate.
 */
export type WatchOutcome = "verified" | "promoted" | "rejected" | "cancelled" | "failed";

export interface WatchResult extends WatchSnapshot {
  outcome: WatchOutcome;
  ok: boolean;
}

export interface WatchOptions {
  /** Time between polls; default 2000 ms. */
  intervalMs?: number;
  signal?: AbortSignal;
}

export interface WatchReads {
  change(changeId: string): Promise<WatchSnapshot["change"] & { tasks: TaskView[] }>;
  /** The Change's Candidates, newest first. */
  candidates(changeId: string): Promise<CandidateView[]>;
}

/**
 * Polls until the Change or its newest Candidate is final; calls (and awaits) `onUpdate` whenever
 * something moved.
 */
export async function watchChange(
  reads: WatchReads,
  changeId: string,
  onUpdate: (update: WatchUpdate) => void | Promise<void>,
  opts: WatchOptions = {},
): Promise<WatchResult> {
  const intervalMs = opts.intervalMs ?? 2000;
  let previous: WatchSnapshot | null = null;
  for (;;) {
    opts.signal?.throwIfAborted();
    const [change, candidates] = await Promise.all([reads.change(changeId), reads.candidates(changeId)]);
    const snapshot: WatchSnapshot = {
      change: { id: change.id, title: change.title, status: change.status },
      tasks: change.tasks.map((t) => ({
        key: t.key,
        title: t.title,
        state: t.state,
        blockedLimit: t.blockedLimit,
        dependencies: t.dependencies,
      })),
      candidate: candidates[0]
        ? {
            id: candidates[0].id,
            status: candidates[0].status,
            approvalRequired: candidates[0].approvalRequired,
            recomposeReason: candidates[0].recomposeReason ?? null,
          }
        : null,
    };
    const transitions = diff(previous, snapshot);
    // Awaited: a slow consumer delays the next poll rather than missing updates.
    if (transitions.length > 0) await onUpdate({ ...snapshot, transitions });
    previous = snapshot;
    const outcome = outcomeOf(snapshot);
    if (outcome) return { ...snapshot, outcome, ok: outcome === "verified" || outcome === "promoted" };
    await sleep(intervalMs, opts.signal);
  }
}

/** The outcome when the snapshot is final, else null. */
export function outcomeOf(s: WatchSnapshot): WatchOutcome | null {
  if (s.change.status === "cancelled") return "cancelled";
  switch (s.candidate?.status) {
    case "verified":
      return "verified";
    case "promoted":
      return "promoted";
    case "rejected":
      return "rejected";
  }
  return s.candidate === null && isStuck(s.tasks) ? "failed" : null;
}

/**
 * A failed or blocked Task with nothing left that can run: no Task ready or running, and no pending
 * Task whose dependencies have all completed (that one is about to become ready).
 */
function isStuck(tasks: TaskView[]): boolean {
  if (!tasks.some((t) => t.state === "failed" || t.state === "blocked")) return false;
  const completed = new Set(tasks.filter((t) => t.state === "completed").map((t) => t.key));
  return !tasks.some(
    (t) =>
      t.state === "ready" ||
      t.state === "running" ||
      (t.state === "pending" && t.dependencies.every((d) => completed.has(d))),
  );
}

function diff(before: WatchSnapshot | null, after: WatchSnapshot): Transition[] {
  const out: Transition[] = [];
  if (before?.change.status !== after.change.status) {
    out.push({ kind: "change", from: before?.change.status ?? null, to: after.change.status });
  }
  const was = new Map(before?.tasks.map((t) => [t.key, t.state]));
  for (const t of after.tasks) {
    const from = was.get(t.key) ?? null;
    if (from !== t.state) out.push({ kind: "task", key: t.key, from, to: t.state });
  }
  const c = after.candidate;
  if (c) {
    const from = before?.candidate?.id === c.id ? before.candidate.status : null;
    if (from !== c.status) {
      const note = from === null && c.recomposeReason ? c.recomposeReason : undefined;
      out.push({ kind: "candidate", id: c.id, from, to: c.status, ...(note ? { note } : {}) });
    }
  }
  return out;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener("abort", abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener("abort", abort, { once: true });
  });
}
