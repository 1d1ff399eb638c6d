import type { TaskState } from "./model.ts";

/**
 * The statuses of a Change, a Task, an Agent run and a release, and the moves between them, as
 * data (Candidates: verification/candidate-status.ts). The named sets are what the code asks
 * ("can this Change still move?", "may this Task be retried?"), each answered in one place.
 */
/** The statuses a table lets an entity leave for `to` (what a move to `to` may start from). */
export function statusesInto<S extends string>(table: Readonly<Record<S, readonly S[]>>, to: S): S[] {
  return (Object.keys(table) as S[]).filter((s) => table[s].includes(to));
}

export const CHANGE_STATUSES = ["open", "verifying", "conflicted", "promoted", "cancelled"] as const;
export type ChangeStatus = (typeof CHANGE_STATUSES)[number];
export const CHANGE_TRANSITIONS: Readonly<Record<ChangeStatus, readonly ChangeStatus[]>> = {
  // Every Task completed: composed and verified; a retried Task reopens it.
  open: ["verifying", "cancelled"],
  verifying: ["open", "conflicted", "promoted", "cancelled"],
  // Its ChangeSets conflict on the current generation: re-running the Tasks reopens it.
  conflicted: ["open", "cancelled"],
  promoted: [],
  cancelled: [],
};
export const CHANGE_STATUS_SETS = {
  /** Nothing of it runs again. */
  final: ["promoted", "cancelled"],
} as const satisfies Record<string, readonly ChangeStatus[]>;

export const TASK_TRANSITIONS: Readonly<Record<TaskState, readonly TaskState[]>> = {
  pending: ["ready", "blocked"],
  // A person's fixture completes a ready, failed or blocked Task without a run (fixture.ts).
  ready: ["running", "blocked", "completed"],
  running: ["completed", "failed", "blocked"],
  // A completed Task runs again only when its Change's newest Candidate conflicted or was rejected (a retry).
  completed: ["pending"],
  failed: ["pending", "completed"],
  blocked: ["pending", "completed"],
};
export const TASK_STATE_SETS = {
  /** A person (or the budget's resume) may start a new attempt. */
  retryable: ["failed", "blocked"],
  /** A person may publish a fixture ChangeSet for it (a blocked one unless it was cancelled). */
  fixturePublishable: ["ready", "failed", "blocked"],
} as const satisfies Record<string, readonly TaskState[]>;

export const AGENT_RUN_STATUSES = ["queued", "running", "completed", "failed", "blocked", "cancelled"] as const;
export type AgentRunStatus = (typeof AGENT_RUN_STATUSES)[number];
export const AGENT_RUN_TRANSITIONS: Readonly<Record<AgentRunStatus, readonly AgentRunStatus[]>> = {
  // A woken run (a wake for a Task whose run is working) is received without running (woken.ts).
  queued: ["running", "completed"],
  // A running run whose runner died is claimed again (running -> running).
  running: ["running", "completed", "failed", "blocked", "cancelled"],
  completed: [],
  failed: [],
  blocked: [],
  cancelled: [],
};
export const AGENT_RUN_STATUS_SETS = {
  /** Runs whose workspace fork may be swept once old enough. */
  ended: ["completed", "failed", "blocked"],
} as const satisfies Record<string, readonly AgentRunStatus[]>;

export const RELEASE_STATUSES = ["running", "succeeded", "failed"] as const;
export type ReleaseStatus = (typeof RELEASE_STATUSES)[number];
export const RELEASE_TRANSITIONS: Readonly<Record<ReleaseStatus, readonly ReleaseStatus[]>> = {
  running: ["succeeded", "failed"],
  succeeded: [],
  failed: [],
};
